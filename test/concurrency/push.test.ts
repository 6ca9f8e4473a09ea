/**
 * Concurrency through the handler, on memory and fs storage: 50 concurrent
 * pushes sharing layers (different repositories and one repository), the
 * same blob uploaded at once, a tag overwritten while it is read, and deletes
 * racing pushes. Afterwards every stored blob and manifest verifies against
 * its digest (storage walked with `list`, every object hashed).
 *
 * Errors allowed in the races (docs/security.md): a manifest PUT racing the
 * delete of one of its blobs gets 400 MANIFEST_BLOB_UNKNOWN; a DELETE or GET
 * racing another DELETE gets 404 (BLOB_UNKNOWN / MANIFEST_UNKNOWN). Nothing
 * else, and never a 5xx.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { checkRegistryResponse, verifyAllBlobs } from "../fuzz/support.js";
import { imageManifest, sha256 } from "../registry/helpers.js";

type Handler = (r: Request) => Promise<Response>;
const BASE = "http://reg.test";
const enc = new TextEncoder();
const figures: string[] = [];

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  console.log(figures.join("\n"));
});

const drivers: [string, () => Promise<StorageDriver>][] = [
  ["memory", async () => memoryStorage()],
  [
    "fs",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "rk-concurrency-"));
      dirs.push(dir);
      return fsStorage({ root: dir, fsync: false });
    },
  ],
];

async function call(registry: Handler, method: string, url: string, init: RequestInit = {}): Promise<{ status: number; text: string; headers: Headers; code?: string }> {
  const r = await registry(new Request(url.startsWith("http") ? url : BASE + url, { method, ...init }));
  const text = await checkRegistryResponse(r, method);
  const code = r.status >= 400 && text ? (JSON.parse(text) as { errors: { code: string }[] }).errors[0]!.code : undefined;
  return { status: r.status, text, headers: r.headers, ...(code ? { code } : {}) };
}

/** Upload a blob fully; returns the final status. */
async function pushBlob(registry: Handler, name: string, data: Uint8Array, chunked = false): Promise<number> {
  const digest = sha256(data);
  const start = await call(registry, "POST", `/v2/${name}/blobs/uploads/`);
  expect(start.status).toBe(202);
  let location = start.headers.get("location")!;
  let rest = data;
  if (chunked && data.byteLength > 1) {
    const half = data.byteLength >> 1;
    const patch = await call(registry, "PATCH", location, { body: data.slice(0, half), headers: { "content-range": `0-${half - 1}` } });
    expect(patch.status).toBe(202);
    location = patch.headers.get("location")!;
    rest = data.slice(half);
  }
  const url = new URL(location);
  url.searchParams.set("digest", digest);
  return (await call(registry, "PUT", url.href, { body: new Uint8Array(rest) })).status;
}

const SHARED = [0, 1, 2].map((i) => enc.encode(`shared-layer-${i}-`.repeat(200 + i * 50)));

function image(i: number): { config: Uint8Array; layers: Uint8Array[] } {
  return {
    config: enc.encode(JSON.stringify({ architecture: "amd64", os: "linux", image: i })),
    layers: [SHARED[i % 3]!, SHARED[(i + 1) % 3]!, enc.encode(`unique-layer-${i}-`.repeat(100))],
  };
}

/** Push one image (blobs concurrently, then the manifest); returns the manifest PUT answer. */
async function pushImage(registry: Handler, name: string, tag: string, i: number) {
  const { config, layers } = image(i);
  const statuses = await Promise.all([config, ...layers].map((b, k) => pushBlob(registry, name, b, k % 2 === 1)));
  expect(statuses).toEqual(statuses.map(() => 201));
  const manifest = imageManifest(sha256(config), config.byteLength, layers.map((l) => ({ digest: sha256(l), size: l.byteLength })));
  const put = await call(registry, "PUT", `/v2/${name}/manifests/${tag}`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
  return { put, manifest };
}

describe.each(drivers)("concurrency (%s storage)", (driverName, make) => {
  it("50 concurrent pushes of images sharing layers, into 25 repositories and into one; all readable and verified", async () => {
    const storage = await make();
    const errors: unknown[] = [];
    const registry = createRegistry({ storage, uploadSecret: "c", log: (e) => void (e.level === "error" && errors.push(e)) });
    const jobs = Array.from({ length: 50 }, (_, i) => (i < 25 ? { name: `multi/r${i}`, tag: "v1", i } : { name: "same/repo", tag: `t${i}`, i }));
    const results = await Promise.all(jobs.map((j) => pushImage(registry, j.name, j.tag, j.i)));
    expect(results.map((r) => r.put.status)).toEqual(jobs.map(() => 201));
    for (const [k, j] of jobs.entries()) {
      const get = await call(registry, "GET", `/v2/${j.name}/manifests/${j.tag}`);
      expect(get.status).toBe(200);
      expect(get.text).toBe(results[k]!.manifest);
      for (const layer of image(j.i).layers) {
        const blob = await registry(new Request(`${BASE}/v2/${j.name}/blobs/${sha256(layer)}`));
        expect(sha256(new Uint8Array(await blob.arrayBuffer()))).toBe(sha256(layer));
      }
    }
    const tags = JSON.parse((await call(registry, "GET", "/v2/same/repo/tags/list")).text) as { tags: string[] };
    expect(tags.tags.length).toBe(25);
    const verified = await verifyAllBlobs(storage);
    // 3 shared layers + 50 configs + 50 unique layers + 50 manifests
    expect(verified).toBe(3 + 50 + 50 + 50);
    expect(errors).toEqual([]);
    figures.push(`${driverName}: 50 concurrent image pushes (${50 * 4} blob uploads), ${verified} objects verified`);
  });

  it("the same blob uploaded 20 times at once, in one repository and across repositories", async () => {
    const storage = await make();
    const registry = createRegistry({ storage, uploadSecret: "c" });
    const data = enc.encode("the-same-blob-".repeat(5000));
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => pushBlob(registry, i % 2 ? "same/one" : `same/r${i}`, data, i % 3 === 0)));
    expect(statuses).toEqual(statuses.map(() => 201));
    for (const name of ["same/one", "same/r0", "same/r18"]) {
      const r = await registry(new Request(`${BASE}/v2/${name}/blobs/${sha256(data)}`));
      expect(r.status).toBe(200);
      expect(sha256(new Uint8Array(await r.arrayBuffer()))).toBe(sha256(data));
    }
    expect(await verifyAllBlobs(storage)).toBe(1);
    figures.push(`${driverName}: the same blob uploaded 20 times at once, 1 object verified`);
  });

  it("a tag overwritten while it is read: every read is a complete manifest matching its Docker-Content-Digest", async () => {
    const storage = await make();
    const registry = createRegistry({ storage, uploadSecret: "c" });
    const manifests: string[] = [];
    for (let i = 0; i < 4; i++) manifests.push((await pushImage(registry, "hot/app", "hot", i)).manifest);
    const known = new Set(manifests);
    let writing = true;
    const writer = (async () => {
      try {
        for (let n = 0; n < 60; n++) {
          const put = await call(registry, "PUT", "/v2/hot/app/manifests/hot", { body: manifests[n % 4]!, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
          expect(put.status, put.text).toBe(201);
        }
      } finally {
        writing = false;
      }
    })();
    let reads = 0;
    const reader = async () => {
      while (writing) {
        const r = await registry(new Request(`${BASE}/v2/hot/app/manifests/hot`));
        if (r.status !== 200) writing = false;
        expect(r.status, await r.clone().text()).toBe(200);
        const text = await r.text();
        expect(known.has(text)).toBe(true);
        expect(r.headers.get("docker-content-digest")).toBe(sha256(text));
        expect(r.headers.get("content-length")).toBe(String(enc.encode(text).byteLength));
        reads++;
      }
    };
    await Promise.all([writer, ...Array.from({ length: 8 }, reader)]);
    expect(reads).toBeGreaterThan(20);
    await verifyAllBlobs(storage);
    figures.push(`${driverName}: 60 tag overwrites during ${reads} concurrent reads`);
  });

  it("deletes racing pushes: only the allowed errors, never a 5xx, and what remains verifies", async () => {
    const storage = await make();
    const errors: unknown[] = [];
    const registry = createRegistry({ storage, uploadSecret: "c", deleteEnabled: true, log: (e) => void (e.level === "error" && errors.push(e)) });
    const seen = new Map<string, number>();
    const note = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);
    const pusher = async (i: number) => {
      const { config, layers } = image(i);
      for (const b of [config, ...layers]) expect(await pushBlob(registry, "race/app", b)).toBe(201);
      const manifest = imageManifest(sha256(config), config.byteLength, layers.map((l) => ({ digest: sha256(l), size: l.byteLength })));
      const put = await call(registry, "PUT", `/v2/race/app/manifests/t${i}`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
      note(`manifest PUT ${put.status} ${put.code ?? ""}`);
      expect(put.status === 201 || (put.status === 400 && put.code === "MANIFEST_BLOB_UNKNOWN")).toBe(true);
      if (i % 2 === 0) return;
      const del = await call(registry, "DELETE", `/v2/race/app/manifests/${sha256(manifest)}`);
      note(`manifest DELETE ${del.status} ${del.code ?? ""}`);
      expect(del.status === 202 || (del.status === 404 && del.code === "MANIFEST_UNKNOWN")).toBe(true);
    };
    const deleter = async (k: number) => {
      for (let n = 0; n < 10; n++) {
        await new Promise((resolve) => setTimeout(resolve, 3 + k));
        const layer = SHARED[(k + n) % 3]!;
        const del = await call(registry, "DELETE", `/v2/race/app/blobs/${sha256(layer)}`);
        note(`blob DELETE ${del.status} ${del.code ?? ""}`);
        expect(del.status === 202 || (del.status === 404 && del.code === "BLOB_UNKNOWN")).toBe(true);
        const tag = await call(registry, "DELETE", `/v2/race/app/manifests/t${(k * 7 + n) % 20}`);
        note(`tag DELETE ${tag.status} ${tag.code ?? ""}`);
        expect(tag.status === 202 || (tag.status === 404 && tag.code === "MANIFEST_UNKNOWN")).toBe(true);
      }
    };
    await Promise.all([...Array.from({ length: 20 }, (_, i) => pusher(i)), ...Array.from({ length: 5 }, (_, k) => deleter(k))]);
    // every manifest still listed by a tag resolves, and its blobs verify
    const tags = JSON.parse((await call(registry, "GET", "/v2/race/app/tags/list")).text) as { tags: string[] };
    for (const t of tags.tags) {
      const get = await call(registry, "GET", `/v2/race/app/manifests/${t}`);
      expect([200, 404]).toContain(get.status);
    }
    const verified = await verifyAllBlobs(storage);
    expect(errors).toEqual([]);
    figures.push(`${driverName}: 20 pushes racing 100 deletes: ${JSON.stringify(Object.fromEntries(seen))}; ${verified} objects verified`);
  });
});

