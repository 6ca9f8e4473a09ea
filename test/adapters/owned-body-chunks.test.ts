/**
 * Request-body chunks freed as soon as they are written (util/owned-chunks.ts):
 * the Node adapter marks an HTTP/1 body, the registry's hashing pass-through
 * keeps the mark, the fs driver frees each batch once its write is done. The
 * stored blob must still hash to its name, and nothing else may lose bytes:
 * a driver that keeps the chunks (memory), an h2c body, a stream nobody marked.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect as h2connect } from "node:http2";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { serve, type RunningServer } from "../../src/node/index.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { markOwnedChunks } from "../../src/runtime/adapter-capabilities.js";
import { bytesReleased } from "../../src/util/owned-chunks.js";

const MiB = 1024 * 1024;
const KiB = 1024;
const digestOf = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

let running: RunningServer | undefined;
let root: string | undefined;
afterEach(async () => {
  await running?.close(500);
  running = undefined;
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

async function registryOn(storage: StorageDriver, options: { h2c?: boolean } = {}): Promise<string> {
  running = await serve(createRegistry({ storage }), { host: "127.0.0.1", port: 0, ...options });
  return running.url;
}

async function fsRoot(): Promise<StorageDriver> {
  root = await mkdtemp(path.join(tmpdir(), "registry-kit-owned-"));
  return fsStorage({ root });
}

/** POST then PUT `?digest=` with `body` over HTTP/1.1, sent in 64 KiB writes; the PUT's status. */
async function monolithicPut(url: string, repo: string, body: Buffer): Promise<number> {
  const started = await fetch(`${url}/v2/${repo}/blobs/uploads/`, { method: "POST" });
  expect(started.status).toBe(202);
  const location = new URL(started.headers.get("location")!, url);
  location.searchParams.set("digest", digestOf(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(location, { method: "PUT", headers: { "content-length": String(body.length), "content-type": "application/octet-stream" } }, (res) => {
      res.resume().on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    (async () => {
      for (let at = 0; at < body.length; at += 64 * KiB) if (!req.write(body.subarray(at, at + 64 * KiB))) await new Promise((r) => req.once("drain", r));
      req.end();
    })().catch(reject);
  });
}

async function pulled(url: string, repo: string, digest: string): Promise<Buffer> {
  const res = await fetch(`${url}/v2/${repo}/blobs/${digest}`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe("request-body chunks freed once written", () => {
  it("frees an HTTP/1 upload's chunks on fs, and the blob still hashes to its name", async () => {
    const storage = await fsRoot();
    const url = await registryOn(storage);
    const body = randomBytes(12 * MiB + 12_345);
    const before = bytesReleased();
    expect(await monolithicPut(url, "owned/fs", body)).toBe(201);
    // Every chunk the parser made went through the fs driver's writes; all but a few small ones were freed.
    expect(bytesReleased() - before).toBeGreaterThan(body.length - MiB);
    expect(bytesReleased() - before).toBeLessThanOrEqual(body.length);
    const digest = digestOf(body);
    expect(digestOf(await pulled(url, "owned/fs", digest))).toBe(digest);
  });

  it("frees the chunks of uploads arriving together, each blob still its own bytes", async () => {
    const url = await registryOn(await fsRoot());
    const bodies = Array.from({ length: 4 }, () => randomBytes(5 * MiB + 333));
    const before = bytesReleased();
    const statuses = await Promise.all(bodies.map((body, i) => monolithicPut(url, `owned/together-${i}`, body)));
    expect(statuses).toEqual([201, 201, 201, 201]);
    const total = bodies.reduce((n, b) => n + b.length, 0);
    expect(bytesReleased() - before).toBeGreaterThan(total - 4 * MiB);
    expect(bytesReleased() - before).toBeLessThanOrEqual(total);
    for (const [i, body] of bodies.entries()) expect((await pulled(url, `owned/together-${i}`, digestOf(body))).equals(body)).toBe(true);
  });

  it("frees a chunked upload's PATCH bodies too, and the blob is their bytes in order", async () => {
    const url = await registryOn(await fsRoot());
    const body = randomBytes(9 * MiB + 17);
    const started = await fetch(`${url}/v2/owned/chunked/blobs/uploads/`, { method: "POST" });
    let location = new URL(started.headers.get("location")!, url);
    const before = bytesReleased();
    for (let at = 0; at < body.length; at += 3 * MiB) {
      const part = body.subarray(at, Math.min(body.length, at + 3 * MiB));
      const status = await new Promise<{ code: number; next: string }>((resolve, reject) => {
        const req = httpRequest(location, { method: "PATCH", headers: { "content-length": String(part.length), "content-range": `${at}-${at + part.length - 1}`, "content-type": "application/octet-stream" } }, (res) => {
          res.resume().on("end", () => resolve({ code: res.statusCode!, next: String(res.headers.location) }));
        });
        req.on("error", reject);
        req.end(part);
      });
      expect(status.code).toBe(202);
      location = new URL(status.next, url);
    }
    location.searchParams.set("digest", digestOf(body));
    expect((await fetch(location, { method: "PUT" })).status).toBe(201);
    expect(bytesReleased() - before).toBeGreaterThan(body.length - 3 * MiB);
    expect((await pulled(url, "owned/chunked", digestOf(body))).equals(body)).toBe(true);
  });

  it("frees nothing on a driver that keeps the chunks (memory), whose blob stays whole", async () => {
    const url = await registryOn(memoryStorage());
    const body = randomBytes(6 * MiB + 7);
    const before = bytesReleased();
    expect(await monolithicPut(url, "owned/memory", body)).toBe(201);
    expect(bytesReleased()).toBe(before);
    expect((await pulled(url, "owned/memory", digestOf(body))).equals(body)).toBe(true);
  });

  it("frees nothing of an h2c body (its chunks may share the session's buffers)", async () => {
    const url = await registryOn(await fsRoot(), { h2c: true });
    const started = await fetch(`${url}/v2/owned/h2/blobs/uploads/`, { method: "POST" });
    const location = new URL(started.headers.get("location")!, url);
    const body = randomBytes(3 * MiB + 5);
    location.searchParams.set("digest", digestOf(body));
    const before = bytesReleased();
    const session = h2connect(url);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ":method": "PUT", ":path": `${location.pathname}${location.search}`, "content-type": "application/octet-stream" });
        let code = 0;
        stream.on("response", (headers) => (code = Number(headers[":status"])));
        stream.resume().on("end", () => resolve(code)).on("error", reject);
        stream.end(body);
      });
      expect(status).toBe(201);
    } finally {
      session.close();
    }
    expect(bytesReleased()).toBe(before);
    expect(digestOf(await pulled(url, "owned/h2", digestOf(body)))).toBe(digestOf(body));
  });

  it("the fs driver frees a marked stream's chunks only after writing them, and leaves an unmarked one's alone", async () => {
    const storage = await fsRoot();
    const make = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.allocUnsafeSlow(64 * KiB).fill(i % 251));
    const streamOf = (chunks: Buffer[]): ReadableStream<Uint8Array> => {
      let i = 0;
      return new ReadableStream<Uint8Array>({ pull: (c) => (i < chunks.length ? c.enqueue(chunks[i++]!) : c.close()) }, { highWaterMark: 0 });
    };
    const marked = make(40); // 2.5 MiB: several write batches
    const expected = digestOf(Buffer.concat(marked));
    const before = bytesReleased();
    await storage.write("owned/marked", markOwnedChunks(streamOf(marked)));
    expect(bytesReleased() - before).toBe(40 * 64 * KiB);
    for (const chunk of marked) expect(chunk.byteLength).toBe(0);
    expect(digestOf(await readFile(path.join(root!, "owned", "marked")))).toBe(expected);

    const kept = make(40);
    const copy = Buffer.concat(kept);
    await storage.write("owned/unmarked", streamOf(kept));
    expect(bytesReleased() - before).toBe(40 * 64 * KiB);
    expect(Buffer.concat(kept).equals(copy)).toBe(true);
    expect((await readFile(path.join(root!, "owned", "unmarked"))).equals(copy)).toBe(true);
  });
});
