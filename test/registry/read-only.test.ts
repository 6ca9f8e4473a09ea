import { describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { errorCode, pushImage, req, sha256 } from "./helpers.js";

/** A writable registry and a read-only one on the same storage, with one image pushed. */
async function setup() {
  const storage = memoryStorage();
  const writable = createRegistry({ storage, uploadSecret: "s", deleteEnabled: true });
  const image = await pushImage(writable, "app", "v1");
  const start = await writable(req("POST", "/v2/app/blobs/uploads/"));
  const uploadPath = new URL(start.headers.get("location")!).pathname + new URL(start.headers.get("location")!).search;
  const readOnly = createRegistry({ storage, uploadSecret: "s", deleteEnabled: true, readOnly: true });
  return { storage, readOnly, image, uploadPath };
}

/** Every key under the layout's top-level folders, with its size: what "nothing stored" is checked against. */
async function listKeys(storage: ReturnType<typeof memoryStorage>): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of ["blobs", "repositories", "uploads", "catalog"]) {
    for (const key of (await storage.list(prefix, { limit: 10_000 })).keys) keys.push(`${key} ${(await storage.stat(key))?.size}`);
  }
  return keys;
}

describe("readOnly: true", () => {
  it("refuses every write with 405 UNSUPPORTED and an Allow of the read methods, and stores nothing", async () => {
    const { storage, readOnly, image, uploadPath } = await setup();
    const before = await listKeys(storage);
    const manifestType = { "content-type": "application/vnd.oci.image.manifest.v1+json" };
    // [method, path, body, the Allow header expected: the route's read methods]
    const writes: [string, string, RequestInit, string][] = [
      ["POST", "/v2/app/blobs/uploads/", {}, ""],
      ["POST", `/v2/other/blobs/uploads/?mount=${image.layer}&from=app`, {}, ""],
      ["POST", `/v2/app/blobs/uploads/?digest=${sha256("x")}`, { body: "x" }, ""],
      ["PATCH", uploadPath, { body: "abc" }, "GET"],
      ["PUT", `${uploadPath}&digest=${sha256("")}`, { body: "" }, "GET"],
      ["DELETE", uploadPath, {}, "GET"],
      ["PUT", "/v2/app/manifests/v2", { body: image.manifest, headers: manifestType }, "GET, HEAD"],
      ["DELETE", `/v2/app/manifests/${image.digest}`, {}, "GET, HEAD"],
      ["DELETE", `/v2/app/blobs/${image.layer}`, {}, "GET, HEAD"],
    ];
    for (const [method, path, init, allow] of writes) {
      const response = await readOnly(req(method, path, init));
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("allow"), `${method} ${path}`).toBe(allow);
      expect(await errorCode(response)).toBe("UNSUPPORTED");
    }
    expect(await listKeys(storage)).toEqual(before);
  });

  it("keeps every read working: manifest, blob, tags, catalog, upload status", async () => {
    const { readOnly, image, uploadPath } = await setup();
    const manifest = await readOnly(req("GET", "/v2/app/manifests/v1", { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } }));
    expect(manifest.status).toBe(200);
    expect(await manifest.text()).toBe(image.manifest);
    const blob = await readOnly(req("GET", `/v2/app/blobs/${image.layer}`));
    expect(blob.status).toBe(200);
    expect(await blob.text()).toBe("layer-bytes-x");
    expect((await readOnly(req("HEAD", `/v2/app/blobs/${image.config}`))).status).toBe(200);
    expect(await (await readOnly(req("GET", "/v2/app/tags/list"))).json()).toEqual({ name: "app", tags: ["v1"] });
    expect(await (await readOnly(req("GET", "/v2/_catalog"))).json()).toEqual({ repositories: ["app"] });
    expect((await readOnly(req("GET", uploadPath))).status).toBe(204);
  });

  it("authorizes before refusing, as Distribution: a caller without access gets the authorizer's answer", async () => {
    const storage = memoryStorage();
    const registry = createRegistry({
      storage, uploadSecret: "s", readOnly: true,
      authorize: async () => new Response("no", { status: 401 }),
    });
    expect((await registry(req("POST", "/v2/app/blobs/uploads/"))).status).toBe(401);
  });
});
