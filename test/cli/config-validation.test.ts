/**
 * The `validation` section read as Distribution reads it, into
 * `createRegistry`'s `manifestValidation`, and what the all-in-one server then
 * does with a manifest whose layer carries `urls`.
 */
import { describe, expect, it } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

const BASE = "version: 0.1\nstorage: {inmemory: {}}\nhttp: {secret: s}\n";

function read(yaml: string, env: Record<string, string> = {}) {
  return resolveConfig({ document: parseConfigText(BASE + yaml), env, cwd: "/srv" });
}
const validation = (yaml: string, env: Record<string, string> = {}) => read(yaml, env).config.validation;

describe("validation (config)", () => {
  it("without the section: no layer URL is accepted, every index child is wanted (Distribution's default)", () => {
    expect(validation("")).toEqual({ urls: { allow: [] }, indexes: "all" });
  });

  it("reads allow and deny as expressions, each list on its own, with no warning", () => {
    const { config, warnings } = read("validation:\n  manifests:\n    urls:\n      allow: ['^https?://([^/]+\\.)*example\\.com/']\n      deny: ['^https?://www\\.example\\.com/']\n");
    expect(warnings.join("\n")).not.toMatch(/validation/);
    expect(config.validation).toEqual({ urls: { allow: [/^https?:\/\/([^/]+\.)*example\.com\//], deny: [/^https?:\/\/www\.example\.com\//] }, indexes: "all" });
    expect(validation("validation: {manifests: {urls: {deny: [bad]}}}\n")).toEqual({ urls: { deny: [/bad/] }, indexes: "all" });
    expect(validation("validation: {manifests: {urls: {allow: ['^https://a{1,3}/']}}}\n")).toEqual({ urls: { allow: [/^https:\/\/a{1,3}\//] }, indexes: "all" });
  });

  it("turns Go's leading (?i) into the i flag", () => {
    const allow = validation("validation: {manifests: {urls: {allow: ['(?i)^https://EXAMPLE\\.com/']}}}\n")?.urls?.allow;
    expect(allow).toEqual([/^https:\/\/EXAMPLE\.com\//i]);
    expect(allow![0]!.test("https://example.com/x")).toBe(true);
  });

  it("refuses an expression it cannot compile, naming the entry", () => {
    expect(() => read("validation: {manifests: {urls: {allow: ['^ok', '(unclosed']}}}\n")).toThrow(ConfigError);
    expect(() => read("validation: {manifests: {urls: {allow: ['^ok', '(unclosed']}}}\n")).toThrow(/validation\.manifests\.urls\.allow\[1\]/);
    expect(() => read("validation: {manifests: {urls: {deny: ['(?U)a+']}}}\n")).toThrow(/validation\.manifests\.urls\.deny\[0\].*ungreedy/);
  });

  it("disabled: true checks URLs only for http(s) and indexes not at all; the deprecated enabled: true wins; enabled: false alone changes nothing", () => {
    expect(validation("validation: {disabled: true, manifests: {urls: {allow: [x]}}}\n")).toEqual({ urls: {}, indexes: "none" });
    expect(validation("validation: {disabled: true, enabled: true}\n")).toEqual({ urls: { allow: [] }, indexes: "all" });
    expect(validation("validation: {enabled: false}\n")).toEqual({ urls: { allow: [] }, indexes: "all" });
    expect(validation("", { REGISTRY_VALIDATION_DISABLED: "true" })).toEqual({ urls: {}, indexes: "none" });
  });

  it("reads indexes.platforms (all, none, list with platformlist; any case) as Distribution 3", () => {
    expect(validation("validation: {manifests: {indexes: {platforms: NONE}}}\n")?.indexes).toBe("none");
    expect(validation("validation: {manifests: {indexes: {platforms: all}}}\n")?.indexes).toBe("all");
    expect(validation("validation: {manifests: {indexes: {platforms: list, platformlist: [{architecture: amd64, os: linux}, {architecture: arm64, os: linux}]}}}\n")?.indexes)
      .toEqual({ platforms: [{ architecture: "amd64", os: "linux" }, { architecture: "arm64", os: "linux" }] });
    // Distribution checks every child when the list is empty.
    expect(validation("validation: {manifests: {indexes: {platforms: list}}}\n")?.indexes).toBe("all");
    expect(() => read("validation: {manifests: {indexes: {platforms: some}}}\n")).toThrow(/validation\.manifests\.indexes\.platforms.*all, none or list/);
    expect(() => read("validation: {manifests: {indexes: {platforms: list, platformlist: [{architecture: amd64}]}}}\n"))
      .toThrow(/validation\.manifests\.indexes\.platformlist\[0\]\.os/);
  });
});

describe("validation in the all-in-one server", () => {
  const CONFIG = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"; // "{}"
  const FOREIGN_DIGEST = `sha256:${"ab".repeat(32)}`;

  async function pushForeign(yaml: string, url: string): Promise<{ status: number; code?: string }> {
    const app = await createAllInOne({ ...read(yaml).config, keyDirectory: "/nonexistent-unused" }, { storage: memoryStorage() });
    try {
      const blob = await app.handler(new Request(`http://registry.test/v2/team/app/blobs/uploads/?digest=${CONFIG}`, { method: "POST", body: "{}" }));
      expect(blob.status).toBe(201);
      const manifest = JSON.stringify({
        schemaVersion: 2, mediaType: "application/vnd.docker.distribution.manifest.v2+json",
        config: { mediaType: "application/vnd.docker.container.image.v1+json", digest: CONFIG, size: 2 },
        layers: [{ mediaType: "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", digest: FOREIGN_DIGEST, size: 10, urls: [url] }],
      });
      const res = await app.handler(new Request("http://registry.test/v2/team/app/manifests/v1", {
        method: "PUT", body: manifest, headers: { "content-type": "application/vnd.docker.distribution.manifest.v2+json" },
      }));
      if (res.status === 201) return { status: 201 };
      return { status: res.status, code: ((await res.json()) as { errors: { code: string }[] }).errors[0]!.code };
    } finally {
      await app.close();
    }
  }

  it("refuses a foreign layer's URL without a validation section, takes an allowed one with it", async () => {
    expect(await pushForeign("", "https://mcr.example/layer")).toEqual({ status: 400, code: "MANIFEST_INVALID" });
    const allowing = "validation: {manifests: {urls: {allow: ['^https://mcr\\.example/']}}}\n";
    expect(await pushForeign(allowing, "https://mcr.example/layer")).toEqual({ status: 201 });
    expect(await pushForeign(allowing, "https://elsewhere.example/layer")).toEqual({ status: 400, code: "MANIFEST_INVALID" });
  });
});
