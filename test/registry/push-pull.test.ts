import { describe, expect, it } from "vitest";
import { BASE, bytes, errorCode, expectApiVersion, makeRegistry, pushBlob, pushImage, req, sha256 } from "./helpers.js";

describe("GET /v2/", () => {
  it("answers 200 {} with both API version headers", async () => {
    const registry = makeRegistry();
    const response = await registry(req("GET", "/v2/"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    expectApiVersion(response);
  });

  it("answers 404 with the OCI body outside /v2/", async () => {
    const response = await makeRegistry()(req("GET", "/v1/_ping"));
    expect(response.status).toBe(404);
    expectApiVersion(response);
    expect(await errorCode(response)).toBe("UNSUPPORTED");
  });
});

describe("monolithic push and pull", () => {
  it("POST then PUT with the whole body stores the blob", async () => {
    const registry = makeRegistry();
    const content = bytes("hello, layer");
    const digest = sha256(content);
    const start = await registry(req("POST", "/v2/library/hello/blobs/uploads/"));
    expect(start.status).toBe(202);
    expectApiVersion(start);
    const location = start.headers.get("location")!;
    expect(location.startsWith(`${BASE}/v2/library/hello/blobs/uploads/`)).toBe(true);
    expect(new URL(location).searchParams.get("_state")).toBeTruthy();
    expect(start.headers.get("range")).toBe("0-0");
    expect(start.headers.get("content-length")).toBe("0");
    const uuid = start.headers.get("docker-upload-uuid");
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(start.headers.get("container-upload-uuid")).toBe(uuid);
    expect(location).toContain(uuid!);

    const put = await registry(req("PUT", `${location}&digest=${digest}`, { body: content, headers: { "content-type": "application/octet-stream", expect: "100-continue" } }));
    expect(put.status).toBe(201);
    expect(put.headers.get("location")).toBe(`${BASE}/v2/library/hello/blobs/${digest}`);
    expect(put.headers.get("docker-content-digest")).toBe(digest);
    expect(put.headers.get("container-content-digest")).toBe(digest);

    const get = await registry(req("GET", `/v2/library/hello/blobs/${digest}`));
    expect(get.status).toBe(200);
    expect(get.headers.get("content-length")).toBe(String(content.byteLength));
    expect(get.headers.get("docker-content-digest")).toBe(digest);
    expect(new Uint8Array(await get.arrayBuffer())).toEqual(content);
  });

  it("POST without trailing slash also starts an upload", async () => {
    const response = await makeRegistry()(req("POST", "/v2/a/blobs/uploads"));
    expect(response.status).toBe(202);
  });

  it("pushes a manifest by tag and pulls it back byte for byte", async () => {
    const registry = makeRegistry();
    const image = await pushImage(registry, "library/hello", "v1");
    for (const ref of ["v1", image.digest]) {
      const get = await registry(req("GET", `/v2/library/hello/manifests/${ref}`, { headers: { accept: "application/vnd.docker.distribution.manifest.v2+json" } }));
      expect(get.status).toBe(200);
      expect(get.headers.get("content-type")).toBe("application/vnd.oci.image.manifest.v1+json");
      expect(get.headers.get("docker-content-digest")).toBe(image.digest);
      expect(get.headers.get("etag")).toBe(`"${image.digest}"`);
      expect(await get.text()).toBe(image.manifest);
    }
  });

  it("answers 201 with an absolute Location on manifest PUT", async () => {
    const registry = makeRegistry();
    const config = await pushBlob(registry, "r", "{}");
    const manifest = JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: 2 }, layers: [] });
    const put = await registry(req("PUT", "/v2/r/manifests/latest", { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(put.status).toBe(201);
    expect(put.headers.get("location")).toBe(`${BASE}/v2/r/manifests/${sha256(manifest)}`);
    expect(put.headers.get("docker-content-digest")).toBe(sha256(manifest));
  });
});
