/**
 * Path traversal through names, digests, upload ids, `_state`, `last`,
 * `mount`/`from` and storage keys is impossible: with fs storage in a temp
 * directory, nothing is created outside the root and nothing outside it is
 * read. Header injection through anything that ends up in `Location` or
 * `Link` is impossible too.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import { uploadStateCodec } from "../../src/registry/upload-state.js";
import { checked, type StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { pushImage, sha256 } from "../registry/helpers.js";

const SENTINEL = "outside-the-root-sentinel-7f3a";
let parent: string;
let root: string;
let storage: StorageDriver;
let registry: (r: Request) => Promise<Response>;

async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, e.name);
    out.push(relative(parent, full));
    if (e.isDirectory()) out.push(...(await tree(full)));
  }
  return out;
}

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "rk-traversal-"));
  root = join(parent, "root");
  await mkdir(join(parent, "outside", "repositories", "x", "_manifests", "tags"), { recursive: true });
  await writeFile(join(parent, "secret.txt"), SENTINEL);
  await writeFile(join(parent, "outside", "repositories", "x", "_manifests", "tags", "v1"), sha256("x"));
  storage = fsStorage({ root, fsync: false });
  registry = createRegistry({ storage, uploadSecret: "traversal-secret", deleteEnabled: true });
  await pushImage(registry, "lib/app", "v1", "t");
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

const NAMES = ["..", "../..", "%2e%2e", "%2E%2E/%2e%2e", "..%2f..%2fsecret.txt", "lib/..", "lib/%2e%2e/..", "a/../../outside/repositories/x", "%2f", "..\\..", "lib%00app", "~tmp", "a/~tmp/b", "lib/app/../../..", "%252e%252e"];
const REFS = ["..", "%2e%2e", "..%2f..%2fsecret.txt", "sha256:..%2f..", "sha256:../../secret", `sha256:${"a".repeat(62)}/..`, "v1%2f..%2f..", "~tmp", "..%5c..", "v1%00"];
const UUIDS = ["..", "..%2f..%2fsecret.txt", "%2e%2e", "00000000-0000-0000-0000-000000000000/..", "../../../../secret.txt", "~tmp"];

describe("path traversal with fs storage", () => {
  it("names, references, digests, upload ids and query parameters never reach outside the root", async () => {
    const bodies: string[] = [];
    const send = async (method: string, path: string, body?: string) => {
      let request: Request;
      try {
        request = new Request(`http://reg.test${path}`, { method, ...(body !== undefined ? { body } : {}) });
      } catch {
        return;
      }
      const r = await registry(request);
      expect(r.status, `${method} ${path}`).toBeLessThan(500);
      bodies.push(await r.text());
    };
    for (const name of NAMES) {
      for (const [method, suffix] of [["GET", "tags/list"], ["GET", "manifests/v1"], ["PUT", "manifests/v1"], ["POST", "blobs/uploads/"], ["GET", `blobs/${sha256("x")}`], ["DELETE", "manifests/v1"]] as const) {
        await send(method, `/v2/${name}/${suffix}`, method === "PUT" ? "{}" : undefined);
      }
    }
    for (const ref of REFS) {
      await send("GET", `/v2/lib/app/manifests/${ref}`);
      await send("PUT", `/v2/lib/app/manifests/${ref}`, "{}");
      await send("DELETE", `/v2/lib/app/manifests/${ref}`);
      await send("GET", `/v2/lib/app/blobs/${ref}`);
      await send("GET", `/v2/lib/app/referrers/${ref}`);
    }
    for (const uuid of UUIDS) {
      for (const method of ["GET", "PATCH", "PUT", "DELETE"]) await send(method, `/v2/lib/app/blobs/uploads/${uuid}?_state=x&digest=${sha256("")}`, method === "PATCH" ? "data" : undefined);
    }
    for (const last of ["..", "../../outside/repositories/x/_manifests/tags/a", "~tmp", "%2e%2e%2f%2e%2e", "\u0000", "z".repeat(2000)]) {
      await send("GET", `/v2/lib/app/tags/list?n=10&last=${encodeURIComponent(last)}`);
      await send("GET", `/v2/_catalog?n=10&last=${encodeURIComponent(last)}`);
    }
    for (const from of ["..", "../outside/repositories/x", "%2e%2e"]) {
      await send("POST", `/v2/lib/app/blobs/uploads/?mount=${sha256("x")}&from=${from}`);
      await send("POST", `/v2/lib/app/blobs/uploads/?mount=sha256:../../secret&from=lib/app`);
      await send("POST", `/v2/lib/app/blobs/uploads/?digest=sha256:..%2f..%2fsecret`, "x");
    }

    // a _state signed with the right secret but naming a traversal is still bound to the route's (validated) name and uuid
    const codec = uploadStateCodec("traversal-secret");
    const forged = await codec.sign({ name: "../../outside", uuid: "../../../secret.txt", offset: 0, startedAt: Date.now() });
    const start = await registry(new Request("http://reg.test/v2/lib/app/blobs/uploads/", { method: "POST" }));
    const url = new URL(start.headers.get("location")!);
    url.searchParams.set("_state", forged);
    const refused = await registry(new Request(url, { method: "PATCH", body: "data" }));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe("BLOB_UPLOAD_INVALID");

    const entries = await tree(parent);
    expect(entries.filter((e) => !e.startsWith("root") && !e.startsWith("outside"))).toEqual(["secret.txt"]);
    expect(entries.filter((e) => e.startsWith("outside"))).toEqual(["outside", "outside/repositories", "outside/repositories/x", "outside/repositories/x/_manifests", "outside/repositories/x/_manifests/tags", "outside/repositories/x/_manifests/tags/v1"]);
    expect(await readFile(join(parent, "secret.txt"), "utf8")).toBe(SENTINEL);
    for (const b of bodies) expect(b.includes(SENTINEL)).toBe(false);
  });

  it("the storage layer refuses escaping keys itself: checked() and the fs driver's own containment", async () => {
    const raw = fsStorage({ root, fsync: false });
    const escaping = ["../secret.txt", "a/../../secret.txt", "..", "../root2/x"];
    for (const key of [...escaping, "/etc/passwd", "a/./b", "a//b", "a\u0000b", "a\\..\\..\\secret.txt", "~tmp/x"]) {
      await expect(checked(raw).read(key), key).rejects.toMatchObject({ name: "StorageError", code: "invalid_key" });
      await expect(checked(raw).write(key, new Uint8Array(1)), key).rejects.toMatchObject({ name: "StorageError", code: "invalid_key" });
    }
    // used without checked(), the fs driver still refuses keys that resolve outside its root ("/etc/passwd" resolves inside it)
    for (const key of escaping) {
      await expect(raw.read(key), key).rejects.toMatchObject({ name: "StorageError", code: "invalid_key" });
      await expect(raw.write(key, new Uint8Array(1)), key).rejects.toMatchObject({ name: "StorageError", code: "invalid_key" });
    }
    expect(await readFile(join(parent, "secret.txt"), "utf8")).toBe(SENTINEL);
  });
});

describe("header injection through Location and Link", () => {
  const HOSTILE = ["a\r\nSet-Cookie: x=1", "a%0d%0aSet-Cookie:%20x=1", "a%0D%0ASet-Cookie: x", "a\u2028b", "a\u2029b", "a\u0085b", "a%E2%80%A8b", "a\nb", "a%00b", ">; rel=\"evil\", <http://evil", "a%3E%3B%20rel%3D%22x%22"];

  it("hostile names and tags never get into a header; `last` in Link is percent-encoded", async () => {
    for (const h of HOSTILE) {
      for (const path of [`/v2/lib/${h}/blobs/uploads/`, `/v2/lib/app/manifests/${h}`, `/v2/${h}/tags/list`]) {
        let request: Request;
        try {
          request = new Request(`http://reg.test${path}`, { method: path.includes("uploads") ? "POST" : "PUT", body: "{}" });
        } catch {
          continue;
        }
        const r = await registry(request);
        expect(r.status).toBeLessThan(500);
        expect(r.headers.get("set-cookie")).toBeNull();
        // The URL parser drops raw CR/LF/TAB ("a\nb" becomes "ab", a valid name); anything else is refused.
        if (r.status < 400) expect(r.headers.get("location")).toMatch(/^http:\/\/reg\.test\/v2\/lib\/ab\/blobs\/uploads\/[0-9a-f-]{36}\?_state=[A-Za-z0-9%._-]+$/);
        else expect(r.headers.get("location")).toBeNull();
      }
      for (const list of ["/v2/lib/app/tags/list", "/v2/_catalog"]) {
        const r = await registry(new Request(`http://reg.test${list}?n=1&last=${encodeURIComponent(h)}`));
        expect(r.status).toBe(200);
        const link = r.headers.get("link");
        if (link !== null) {
          expect(link).toMatch(/^<\/v2\/[a-z0-9/_.-]+\?n=1&last=[A-Za-z0-9%._~!*'()-]*>; rel="next"$/);
        }
      }
    }
  });

  it("every header value the registry emits is a Latin-1 string without CR, LF or NUL", async () => {
    // push a few, list them with paging so Location and Link are all produced
    for (const tag of ["a", "b", "c"]) await pushImage(registry, "lib/links", tag, tag);
    const responses = [
      await registry(new Request("http://reg.test/v2/lib/links/tags/list?n=1&last=a")),
      await registry(new Request("http://reg.test/v2/_catalog?n=1")),
      await registry(new Request("http://reg.test/v2/lib/links/blobs/uploads/", { method: "POST" })),
    ];
    for (const r of responses) {
      for (const [k, v] of r.headers) {
        expect(v, k).not.toMatch(/[\r\n\u0000]/);
        expect([...v].every((c) => c.charCodeAt(0) < 256), k).toBe(true);
      }
    }
    expect(responses[0]!.headers.get("link")).toBe('</v2/lib/links/tags/list?n=1&last=b>; rel="next"');
  });
});
