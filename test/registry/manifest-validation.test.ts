/**
 * `createRegistry({ manifestValidation })` (Distribution's
 * `validation.manifests`): the `urls` of layers against `allow`/`deny`, which
 * descriptors must be in the repository, and which child manifests of an
 * index must be (`indexes`). Each rule, with the status and code Distribution
 * answers (400 `MANIFEST_INVALID` where Distribution 2.8 and 3 answer 500
 * `UNKNOWN` for a refused URL, see docs/configuration.md).
 */
import { describe, expect, it } from "vitest";
import type { ManifestValidation } from "../../src/registry/index.js";
import { bytes, makeRegistry, pushBlob, req, sha256, type Handler } from "./helpers.js";

const OCI = "application/vnd.oci.image.manifest.v1+json";
const DOCKER = "application/vnd.docker.distribution.manifest.v2+json";
const FOREIGN = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";
const NONDIST = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip";
const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip";
const DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip";
const ZSTD_LAYER = "application/vnd.oci.image.layer.v1.tar+zstd";
const ABSENT = sha256("a layer nobody pushed");

/** Distribution's example rules: allow one host, deny a path on it. */
const RULES: ManifestValidation = { urls: { allow: [/^https:\/\/allowed\.example\//], deny: [/^https:\/\/allowed\.example\/denied\//] } };

interface Answer {
  status: number;
  code?: string;
  detail?: unknown;
}

async function setup(validation: ManifestValidation | undefined) {
  const registry = makeRegistry(validation ? { manifestValidation: validation } : {});
  const config = await pushBlob(registry, "team/app", "{}");
  const present = await pushBlob(registry, "team/app", "a stored layer");
  return { registry, config, present };
}

async function put(registry: Handler, mediaType: string, doc: object, ref = "v1"): Promise<Answer> {
  const res = await registry(req("PUT", `/v2/team/app/manifests/${ref}`, { body: JSON.stringify({ schemaVersion: 2, mediaType, ...doc }), headers: { "content-type": mediaType } }));
  if (res.status === 201) return { status: 201 };
  const body = (await res.json()) as { errors: { code: string; detail: unknown }[] };
  return { status: res.status, code: body.errors[0]!.code, detail: body.errors[0]!.detail };
}

/** A manifest of `mediaType` whose config is the stored `{}` and whose one layer is `layer`. */
function image(config: string, layer: Record<string, unknown>, mediaType = OCI): object {
  const configType = mediaType === DOCKER ? "application/vnd.docker.container.image.v1+json" : "application/vnd.oci.image.config.v1+json";
  return { config: { mediaType: configType, digest: config, size: 2 }, layers: [{ size: 7, ...layer }] };
}

const refused = (digest: string, url: string): Answer => ({ status: 400, code: "MANIFEST_INVALID", detail: { digest, url } });
const unknown = (digest: string): Answer => ({ status: 400, code: "MANIFEST_BLOB_UNKNOWN", detail: { digest } });

describe("without manifestValidation (the library's default)", () => {
  it("takes any descriptor with urls as stored elsewhere, whatever the URL", async () => {
    const { registry, config } = await setup(undefined);
    expect(await put(registry, DOCKER, image(config, { mediaType: FOREIGN, digest: ABSENT, urls: ["ftp://anywhere/x"] }, DOCKER))).toEqual({ status: 201 });
    expect(await put(registry, OCI, image(config, { mediaType: OCI_LAYER, digest: ABSENT, urls: ["https://other.example/x"] }), "v2")).toEqual({ status: 201 });
  });

  it("refuses urls that are not a list of strings with MANIFEST_INVALID", async () => {
    const { registry, config } = await setup(undefined);
    for (const urls of [[1], "https://x.example/", [null], {}]) {
      expect(await put(registry, OCI, image(config, { mediaType: NONDIST, digest: ABSENT, urls }))).toMatchObject({ status: 400, code: "MANIFEST_INVALID" });
    }
  });

  it("wants every child manifest of an index", async () => {
    const { registry } = await setup(undefined);
    const index = { manifests: [{ mediaType: OCI, digest: ABSENT, size: 3, platform: { architecture: "amd64", os: "linux" } }] };
    expect(await put(registry, "application/vnd.oci.image.index.v1+json", index)).toEqual({ status: 400, code: "MANIFEST_BLOB_UNKNOWN", detail: { digest: ABSENT } });
  });
});

describe("manifestValidation.urls", () => {
  it("allow: [] (Distribution's default) refuses every layer URL", async () => {
    const { registry, config } = await setup({ urls: { allow: [] } });
    expect(await put(registry, DOCKER, image(config, { mediaType: FOREIGN, digest: ABSENT, urls: ["https://allowed.example/x"] }, DOCKER)))
      .toEqual(refused(ABSENT, "https://allowed.example/x"));
    expect(await put(registry, OCI, image(config, { mediaType: NONDIST, digest: ABSENT, urls: ["https://other.example/x"] })))
      .toEqual(refused(ABSENT, "https://other.example/x"));
  });

  it("a Docker foreign layer: stored elsewhere when every URL is allowed; refused for a denied, unlisted, non-http, fragment or unparsable URL, or none", async () => {
    const { registry, config } = await setup(RULES);
    const foreign = (urls?: string[]) => image(config, { mediaType: FOREIGN, digest: ABSENT, ...(urls ? { urls } : {}) }, DOCKER);
    expect(await put(registry, DOCKER, foreign(["https://allowed.example/x"]))).toEqual({ status: 201 });
    expect(await put(registry, DOCKER, foreign(["https://allowed.example/x", "https://allowed.example/y"]))).toEqual({ status: 201 });
    for (const bad of ["https://allowed.example/denied/x", "https://other.example/x", "ftp://allowed.example/x", "https://allowed.example/x#part", "not a url"]) {
      expect(await put(registry, DOCKER, foreign([bad])), bad).toEqual(refused(ABSENT, bad));
    }
    expect(await put(registry, DOCKER, foreign(["https://allowed.example/x", "https://other.example/x"]))).toEqual(refused(ABSENT, "https://other.example/x"));
    expect(await put(registry, DOCKER, foreign())).toEqual({ status: 400, code: "MANIFEST_INVALID", detail: { digest: ABSENT } });
    expect(await put(registry, DOCKER, foreign([]))).toEqual({ status: 400, code: "MANIFEST_INVALID", detail: { digest: ABSENT } });
  });

  it("an OCI non-distributable layer: stored elsewhere with allowed urls, looked up without any", async () => {
    const { registry, config, present } = await setup(RULES);
    expect(await put(registry, OCI, image(config, { mediaType: NONDIST, digest: ABSENT, urls: ["https://allowed.example/x"] }))).toEqual({ status: 201 });
    expect(await put(registry, OCI, image(config, { mediaType: NONDIST, digest: ABSENT, urls: ["https://other.example/x"] }))).toEqual(refused(ABSENT, "https://other.example/x"));
    expect(await put(registry, OCI, image(config, { mediaType: NONDIST, digest: ABSENT }))).toEqual(unknown(ABSENT));
    expect(await put(registry, OCI, image(config, { mediaType: NONDIST, digest: present }))).toEqual({ status: 201 });
  });

  it("an OCI distributable layer: its urls are checked, and it must be stored here anyway (Distribution 3)", async () => {
    const { registry, config, present } = await setup(RULES);
    expect(await put(registry, OCI, image(config, { mediaType: OCI_LAYER, digest: present, urls: ["https://allowed.example/x"] }))).toEqual({ status: 201 });
    expect(await put(registry, OCI, image(config, { mediaType: OCI_LAYER, digest: ABSENT, urls: ["https://allowed.example/x"] }))).toEqual(unknown(ABSENT));
    expect(await put(registry, OCI, image(config, { mediaType: OCI_LAYER, digest: present, urls: ["https://other.example/x"] }))).toEqual(refused(present, "https://other.example/x"));
  });

  it("any other descriptor with urls (Docker layer, zstd layer, config) must be stored here; its urls are not checked", async () => {
    const { registry, config, present } = await setup(RULES);
    for (const mediaType of [DOCKER_LAYER, ZSTD_LAYER]) {
      expect(await put(registry, OCI, image(config, { mediaType, digest: ABSENT, urls: ["https://allowed.example/x"] })), mediaType).toEqual(unknown(ABSENT));
      expect(await put(registry, OCI, image(config, { mediaType, digest: present, urls: ["ftp://other.example/x"] })), mediaType).toEqual({ status: 201 });
    }
    const configElsewhere = { config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: ABSENT, size: 2, urls: ["https://allowed.example/c"] }, layers: [] };
    expect(await put(registry, OCI, configElsewhere)).toEqual(unknown(ABSENT));
  });

  it("deny alone allows every other http(s) URL; {} (validation disabled) allows any http(s) URL without a fragment", async () => {
    const denyOnly = await setup({ urls: { deny: [/bad\.example/] } });
    const foreign = (config: string, url: string) => image(config, { mediaType: FOREIGN, digest: ABSENT, urls: [url] }, DOCKER);
    expect(await put(denyOnly.registry, DOCKER, foreign(denyOnly.config, "https://fine.example/x"))).toEqual({ status: 201 });
    expect(await put(denyOnly.registry, DOCKER, foreign(denyOnly.config, "https://bad.example/x"))).toEqual(refused(ABSENT, "https://bad.example/x"));
    const open = await setup({ urls: {} });
    expect(await put(open.registry, DOCKER, foreign(open.config, "http://any.example/x"))).toEqual({ status: 201 });
    expect(await put(open.registry, DOCKER, foreign(open.config, "file:///etc/passwd"))).toEqual(refused(ABSENT, "file:///etc/passwd"));
    expect(await put(open.registry, DOCKER, foreign(open.config, "https://any.example/x#f"))).toEqual(refused(ABSENT, "https://any.example/x#f"));
  });

  it("a global or sticky expression gives the same answer every time (no lastIndex carried over)", async () => {
    const { registry, config } = await setup({ urls: { allow: [/allowed\.example/g], deny: [/denied/y] } });
    const doc = image(config, { mediaType: FOREIGN, digest: ABSENT, urls: ["https://allowed.example/x"] }, DOCKER);
    for (const ref of ["a", "b", "c"]) expect(await put(registry, DOCKER, doc, ref)).toEqual({ status: 201 });
  });

  it("checks the URLs before looking anything up: a refused URL wins over a missing config", async () => {
    const { registry } = await setup(RULES);
    expect(await put(registry, DOCKER, image(ABSENT, { mediaType: FOREIGN, digest: sha256("f"), urls: ["https://other.example/x"] }, DOCKER)))
      .toEqual(refused(sha256("f"), "https://other.example/x"));
  });
});

describe("manifestValidation.indexes", () => {
  const INDEX = "application/vnd.oci.image.index.v1+json";

  async function withChild(validation: ManifestValidation) {
    const { registry, config } = await setup(validation);
    const child = JSON.stringify({ schemaVersion: 2, mediaType: OCI, config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: 2 }, layers: [] });
    const res = await registry(req("PUT", `/v2/team/app/manifests/${sha256(child)}`, { body: bytes(child), headers: { "content-type": OCI } }));
    expect(res.status).toBe(201);
    return { registry, stored: sha256(child) };
  }
  const entry = (digest: string, platform?: { architecture: string; os: string }) => ({ mediaType: OCI, digest, size: 100, ...(platform ? { platform } : {}) });
  const amd64 = { architecture: "amd64", os: "linux" };
  const arm64 = { architecture: "arm64", os: "linux" };

  it("none: children need not be there", async () => {
    const { registry } = await withChild({ indexes: "none" });
    expect(await put(registry, INDEX, { manifests: [entry(ABSENT, amd64), entry(sha256("x"), arm64)] })).toEqual({ status: 201 });
  });

  it("a platform list: only the listed platforms' children must be there; an entry without platform is not listed", async () => {
    const { registry, stored } = await withChild({ indexes: { platforms: [amd64] } });
    expect(await put(registry, INDEX, { manifests: [entry(stored, amd64), entry(ABSENT, arm64), entry(sha256("y"))] })).toEqual({ status: 201 });
    expect(await put(registry, INDEX, { manifests: [entry(stored, arm64), entry(ABSENT, amd64)] })).toEqual(unknown(ABSENT));
    expect(await put(registry, INDEX, { manifests: [entry(ABSENT, { architecture: "amd64", os: "windows" })] })).toEqual({ status: 201 });
  });

  it("all: every child must be there", async () => {
    const { registry, stored } = await withChild({ indexes: "all" });
    expect(await put(registry, INDEX, { manifests: [entry(stored, amd64)] })).toEqual({ status: 201 });
    expect(await put(registry, INDEX, { manifests: [entry(stored, amd64), entry(ABSENT)] })).toEqual(unknown(ABSENT));
  });
});

describe("manifestValidation itself", () => {
  it.each<[string, unknown]>([
    ["an empty platform list", { indexes: { platforms: [] } }],
    ["a platform without os", { indexes: { platforms: [{ architecture: "amd64" }] } }],
    ["an unknown indexes word", { indexes: "some" }],
    ["a string among the expressions", { urls: { allow: ["^https://"] } }],
    ["expressions not in a list", { urls: { deny: /x/ } }],
  ])("refuses %s with a TypeError", (_what, validation) => {
    expect(() => makeRegistry({ manifestValidation: validation as ManifestValidation })).toThrow(TypeError);
  });
});
