/**
 * A real push and pull through the registry, over every adapter: monolithic
 * PUT with Expect: 100-continue, POST + PATCH + PUT as skopeo does, manifest
 * PUT, then GET/HEAD back with identical digests.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { patternChunks, patternSha256 } from "./test-handler.js";
import { targets, type Running } from "./targets.js";

const LAYER = 8 * 1024 * 1024;
const digestOf = (bytes: string | Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const header = (lines: [string, string][], name: string) => lines.find(([n]) => n === name)?.[1];
const pathOf = (location: string) => {
  const url = new URL(location, "http://x");
  return `${url.pathname}${url.search}`;
};

describe.each(targets)("registry via $name", (target) => {
  let server: Running;
  beforeAll(async () => {
    server = await target.start(createRegistry({ storage: memoryStorage(), uploadSecret: "test-secret" }));
  });
  afterAll(async () => {
    await server.close();
  });

  const layerDigest = `sha256:${patternSha256(LAYER)}`;
  const config = JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } });
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", size: config.length, digest: digestOf(config) },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", size: LAYER, digest: layerDigest }],
  });

  it("pushes a layer with one PUT (Expect: 100-continue)", async () => {
    const post = await server.send({ method: "POST", path: "/v2/matrix/app/blobs/uploads/" });
    expect(post.status).toBe(202);
    const location = pathOf(header(post.lines, "location")!);
    const put = await server.send({
      method: "PUT",
      path: `${location}&digest=${encodeURIComponent(layerDigest)}`,
      headers: { "content-type": "application/octet-stream", "content-length": String(LAYER), ...(target.http ? { expect: "100-continue" } : {}) },
      body: patternChunks(LAYER),
    });
    expect(put.status, put.text).toBe(201);
    expect(header(put.lines, "docker-content-digest")).toBe(layerDigest);
  });

  it("pushes the config with POST + PATCH + PUT, as skopeo does", async () => {
    const post = await server.send({ method: "POST", path: "/v2/matrix/app/blobs/uploads/" });
    const patch = await server.send({
      method: "PATCH", path: pathOf(header(post.lines, "location")!), headers: { "content-type": "application/octet-stream" }, body: Buffer.from(config),
    });
    expect(patch.status).toBe(202);
    const put = await server.send({ method: "PUT", path: `${pathOf(header(patch.lines, "location")!)}&digest=${encodeURIComponent(digestOf(config))}` });
    expect(put.status).toBe(201);
  });

  it("pushes the manifest and pulls everything back", async () => {
    const put = await server.send({
      method: "PUT", path: "/v2/matrix/app/manifests/v1", headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" }, body: Buffer.from(manifest),
    });
    expect(put.status).toBe(201);
    const got = await server.send({ path: "/v2/matrix/app/manifests/v1", headers: { accept: "application/vnd.oci.image.manifest.v1+json" } });
    expect(got.text).toBe(manifest);
    const head = await server.send({ method: "HEAD", path: `/v2/matrix/app/blobs/${layerDigest}` });
    expect(head.status).toBe(200);
    expect(header(head.lines, "content-length")).toBe(String(LAYER));
    const blob = await server.send({ path: `/v2/matrix/app/blobs/${layerDigest}` });
    expect(`sha256:${blob.sha256}`).toBe(layerDigest);
    expect(blob.size).toBe(LAYER);
  });
});
