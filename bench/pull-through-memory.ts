/**
 * Memory of a pull-through blob fetch (issue 19): one blob of N MiB pulled
 * through `createRegistry({ pullThrough })` from an in-process upstream, read
 * by the client while it is stored on fs storage; prints the resident set
 * before and its peak. Flat memory means the growth does not follow N.
 *
 *   N=1024 node --expose-gc --import tsx bench/pull-through-memory.ts
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRegistry, type Upstream } from "../src/registry/index.js";
import { fsStorage } from "../src/storage/fs/index.js";

const MIB = 1 << 20;
const blocks = Number(process.env.N ?? 512);
const block = new Uint8Array(MIB).map((_, i) => (i * 31) & 255);
const hash = createHash("sha256");
for (let i = 0; i < blocks; i++) hash.update(block);
const digest = `sha256:${hash.digest("hex")}`;

const body = () => {
  let sent = 0;
  return new ReadableStream<Uint8Array>({ pull: (c) => (sent++ === blocks ? c.close() : c.enqueue(block.slice())) }, { highWaterMark: 0 });
};
const upstream: Upstream = {
  headManifest: async () => undefined,
  getManifest: async () => undefined,
  headBlob: async () => ({ size: blocks * MIB }),
  getBlob: async () => ({ body: body(), size: blocks * MIB }),
};

const root = mkdtempSync(join(tmpdir(), "rk-bench-pull-through-"));
const registry = createRegistry({ storage: fsStorage({ root, fsync: false }), uploadSecret: "bench", pullThrough: { upstreams: [{ prefix: "", upstream }] } });
(globalThis as { gc?: () => void }).gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
try {
  const response = await registry(new Request(`http://bench/v2/a/b/blobs/${digest}`));
  let served = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) served += chunk.byteLength;
  // The stored copy is committed after the last byte went out: wait for it.
  for (let i = 0; i < 1000; i++) {
    const head = await registry(new Request(`http://bench/v2/a/b/blobs/${digest}`, { method: "HEAD" }));
    if (head.headers.get("cache-status")?.includes("hit")) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  console.log(JSON.stringify({ blobMiB: blocks, servedMiB: served / MIB, rssBeforeMiB: Math.round(before / MIB), rssPeakMiB: Math.round(peak / MIB), growthMiB: Math.round((peak - before) / MIB) }));
} finally {
  clearInterval(sampler);
  rmSync(root, { recursive: true, force: true });
}
