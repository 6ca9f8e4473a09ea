import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import { StorageError, type StorageBody, type StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { req } from "./helpers.js";

const TOTAL = 256 * 1024 * 1024;
const CHUNK = 64 * 1024;
const MAX_GROWTH = 64 * 1024 * 1024;

/** Deterministic chunk `i` (a fresh allocation, as a network read would be). */
function chunk(i: number): Uint8Array {
  const out = new Uint8Array(CHUNK);
  out.fill(i & 255);
  out[0] = (i >> 8) & 255;
  return out;
}

function expectedDigest(): string {
  const hash = createHash("sha256");
  for (let i = 0; i < TOTAL / CHUNK; i++) hash.update(chunk(i));
  return `sha256:${hash.digest("hex")}`;
}

/** A 256 MiB body generated on the fly; samples RSS as it goes. */
function generated(samples: number[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i % 256 === 0) samples.push(process.memoryUsage().rss);
      if (i === TOTAL / CHUNK) controller.close();
      else controller.enqueue(chunk(i++));
    },
  }, { highWaterMark: 0 });
}

/**
 * The memory driver keeps every byte (that is its job), so this test stores
 * upload and blob bytes as sizes only: what is measured is the handler's own
 * memory, which must stay flat.
 */
function sizeOnlyStorage(): StorageDriver {
  const inner = memoryStorage();
  const sizes = new Map<string, number>();
  const isBytes = (key: string) => key.endsWith("/data");
  const drain = async (body: StorageBody, signal?: AbortSignal) => {
    if (body instanceof Uint8Array) return body.byteLength;
    let n = 0;
    for await (const part of body as unknown as AsyncIterable<Uint8Array>) {
      if (signal?.aborted) throw new StorageError("aborted", "aborted");
      n += part.byteLength;
    }
    return n;
  };
  return {
    ...inner,
    async stat(key) {
      const size = sizes.get(key);
      return size === undefined ? inner.stat(key) : { size, modified: new Date() };
    },
    async write(key, body, options) {
      if (!isBytes(key)) return inner.write(key, body, options);
      const size = await drain(body, options?.signal);
      sizes.set(key, size);
      return size;
    },
    async append(key, body, options) {
      if (!isBytes(key)) return inner.append(key, body, options);
      const current = sizes.get(key) ?? 0;
      if (options?.expectedSize !== undefined && options.expectedSize !== current) throw new StorageError("conflict", "size");
      const size = current + (await drain(body, options?.signal));
      sizes.set(key, size);
      return size;
    },
    async move(from, to) {
      const size = sizes.get(from);
      if (size === undefined) return inner.move(from, to);
      sizes.delete(from);
      sizes.set(to, size);
    },
    async deletePrefix(prefix) {
      for (const key of [...sizes.keys()]) if (key.startsWith(prefix + "/")) sizes.delete(key);
      return inner.deletePrefix(prefix);
    },
  };
}

describe("a 256 MiB layer streams through with flat memory", () => {
  const digest = expectedDigest();

  it.each(["PATCH then empty PUT (skopeo)", "monolithic PUT"])("%s", async (mode) => {
    const registry = createRegistry({ storage: sizeOnlyStorage(), uploadSecret: "s" });
    const start = await registry(req("POST", "/v2/big/layer/blobs/uploads/"));
    const location = new URL(start.headers.get("location")!);
    const samples: number[] = [];
    const before = process.memoryUsage().rss;
    const began = performance.now();
    let done: Response;
    if (mode.startsWith("PATCH")) {
      const patch = await registry(req("PATCH", location.href, { body: generated(samples) }));
      expect(patch.status).toBe(202);
      expect(patch.headers.get("range")).toBe(`0-${TOTAL - 1}`);
      const next = new URL(patch.headers.get("location")!);
      next.searchParams.set("digest", digest);
      done = await registry(req("PUT", next.href));
    } else {
      location.searchParams.set("digest", digest);
      done = await registry(req("PUT", location.href, { body: generated(samples) }));
    }
    const seconds = (performance.now() - began) / 1000;
    expect(done.status).toBe(201);
    const head = await registry(req("HEAD", `/v2/big/layer/blobs/${digest}`));
    expect(head.headers.get("content-length")).toBe(String(TOTAL));
    const growth = Math.max(...samples) - before;
    console.info(`[large-stream] ${mode}: ${(TOTAL / 2 ** 20 / seconds).toFixed(0)} MiB/s, RSS growth ${(growth / 2 ** 20).toFixed(1)} MiB over ${samples.length} samples`);
    expect(samples.length).toBeGreaterThan(10);
    expect(growth).toBeLessThan(MAX_GROWTH);
  }, 120_000);
});
