/**
 * The first steps of a new user, as the guides give them (issue 41, item 15):
 * - the banner docs/quick-start.md shows is the one `registry-kit serve`
 *   prints with its defaults, line for line (the `/ui/` line was missing);
 * - the library snippets that keep images on disk (README.md, docs/registry.md)
 *   use the layout of `registry-kit serve`'s default data directory, so an image
 *   pushed through one is there for the other (they once used ./data itself,
 *   where serve keeps ./data/registry);
 * - README's createAllInOne snippet says where the admin password is and listens.
 * Hermetic: handlers in process, fs storage in a temporary directory.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bannerLines, listenAddress } from "../../src/cli/banner.js";
import { createRegistry } from "../../src/registry/index.js";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { resolveConfig } from "../../src/server/config/config.js";
import { fsStorage } from "../../src/storage/fs/index.js";

const ROOT = new URL("../../", import.meta.url);
const FAST = { N: 16, r: 8, p: 1 };
const ORIGIN = "http://127.0.0.1:5000";
const guide = (file: string) => readFile(new URL(file, ROOT), "utf8");
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** The fenced blocks of a guide with their info string. */
function blocks(markdown: string): { info: string; body: string }[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```\s*$/gm)].map((m) => ({ info: m[1]!.trim(), body: m[2]! }));
}

/** A banner line's label column ("  registry        …" → "registry"); the first line by its first words. */
function label(line: string): string {
  return line.startsWith("registry-kit listening on") ? "registry-kit listening on" : line.slice(0, 18).trim();
}

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), "rk-first-steps-"));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe("first steps: the guides against what the code does", () => {
  it("quick-start.md shows the banner `registry-kit serve` prints with its defaults, every line, /ui/ included", async () => {
    // A first start: keys and admin password generated, as in the guide.
    const { config } = resolveConfig({ env: {}, cwd });
    const app = await createAllInOne(config, { origin: ORIGIN, scrypt: FAST });
    try {
      const printed = bannerLines(ORIGIN, app.info, "0.1.0", listenAddress({ address: "127.0.0.1", port: 5000, family: "IPv4" }));
      const shown = blocks(await guide("docs/quick-start.md")).find((b) => b.body.startsWith("registry-kit listening on"));
      expect(shown, "the banner block of quick-start.md").toBeDefined();
      const shownLines = shown!.body.trimEnd().split("\n");
      expect(shownLines.map(label)).toEqual(printed.map(label));
      expect(shownLines).toContain(printed.find((l) => l.includes("/ui/")));
    } finally {
      await app.close();
    }
  });

  for (const file of ["README.md", "docs/registry.md"]) {
    it(`${file}: an image pushed through its fsStorage snippet is there for \`registry-kit serve\` on the default ./data`, async () => {
      const snippet = blocks(await guide(file)).find((b) => b.info === "ts" && b.body.includes("createRegistry(") && b.body.includes("fsStorage("));
      const root = /fsStorage\(\{ root: "([^"]+)" \}\)/.exec(snippet?.body ?? "")?.[1];
      expect(root, `the fsStorage root of ${file}'s first createRegistry snippet`).toBeDefined();

      const registry = createRegistry({ storage: fsStorage({ root: path.resolve(cwd, root!) }), uploadSecret: "s" });
      const config = '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}';
      const post = await registry(new Request(`${ORIGIN}/v2/admin/hello/blobs/uploads/?digest=${sha256(config)}`, { method: "POST", body: config }));
      expect(post.status).toBe(201);
      const manifest = JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", size: config.length, digest: sha256(config) },
        layers: [],
      });
      const put = await registry(new Request(`${ORIGIN}/v2/admin/hello/manifests/v1`, {
        method: "PUT", headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" }, body: manifest,
      }));
      expect(put.status).toBe(201);

      // `registry-kit serve` with no CONFIG in the same directory.
      const served = resolveConfig({ env: { REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }, cwd }).config;
      const app = await createAllInOne(served, { origin: ORIGIN, scrypt: FAST });
      try {
        const basic = `Basic ${Buffer.from("admin:Adm1nPassword").toString("base64")}`;
        const issued = await app.handler(new Request(`${ORIGIN}/service/token?service=registry-kit&scope=repository:admin/hello:pull`, { headers: { authorization: basic } }));
        const { token } = (await issued.json()) as { token: string };
        const tags = await app.handler(new Request(`${ORIGIN}/v2/admin/hello/tags/list`, { headers: { authorization: `Bearer ${token}` } }));
        expect(await tags.json()).toEqual({ name: "admin/hello", tags: ["v1"] });
      } finally {
        await app.close();
      }
    });
  }

  it("README.md's createAllInOne snippet says where the admin password is, and listens", async () => {
    const snippet = blocks(await guide("README.md")).find((b) => b.body.includes("createAllInOne("))?.body ?? "";
    expect(snippet).toContain("services.info.admin?.password");
    expect(snippet).toContain("REGISTRY_KIT_ADMIN_PASSWORD");
    expect(snippet).toMatch(/import \{ serve \} from "registry-kit\/node"/);
    expect(snippet).toMatch(/await serve\(services\.handler, \{ host, port \}\)/);
  });
});
