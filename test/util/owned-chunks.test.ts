/**
 * util/owned-chunks: a chunk released is freed at once (its memory leaves
 * `process.memoryUsage().arrayBuffers` before any collection), and only a
 * chunk that is the whole of its own buffer is; the mark belongs to one
 * stream object.
 */
import { describe, expect, it } from "vitest";
import { hasOwnedChunks, markOwnedChunks } from "../../src/runtime/adapter-capabilities.js";
import { bytesReleased, releaseChunks } from "../../src/util/owned-chunks.js";

const KiB = 1024;
const isBun = typeof process.versions.bun === "string";

/** `n` chunks of 64 KiB, each its own buffer from the C heap (as Node's HTTP parser makes them). */
function parserLikeChunks(n: number, fill = 7): Buffer[] {
  return Array.from({ length: n }, () => Buffer.allocUnsafeSlow(64 * KiB).fill(fill));
}

describe("releaseChunks", () => {
  it("frees whole-buffer chunks at once and counts their bytes", () => {
    const chunks = parserLikeChunks(64);
    const before = process.memoryUsage().arrayBuffers;
    const counted = bytesReleased();
    releaseChunks(chunks);
    const after = process.memoryUsage().arrayBuffers;
    // 4 MiB freed without a collection (nothing else in this test allocates buffers meanwhile), where the runtime
    // reports its buffers' memory (Node; Deno reports 0, Bun counts it otherwise).
    if (!isBun && before > 64 * 64 * KiB) expect(before - after).toBeGreaterThanOrEqual(64 * 64 * KiB);
    expect(bytesReleased() - counted).toBe(64 * 64 * KiB);
    for (const chunk of chunks) expect(chunk.byteLength).toBe(0);
  });

  it("leaves alone a chunk that shares its buffer, a partial view, and an empty one", () => {
    const big = new Uint8Array(256 * KiB).fill(3);
    const half = big.subarray(0, 128 * KiB);
    const tail = big.subarray(128 * KiB);
    // A small Buffer is a slice of Node's shared pool (Bun gives it a buffer of its own, which may be freed).
    const pooled = Buffer.from("small chunks come from Node's shared pool");
    const shared = pooled.byteLength !== pooled.buffer.byteLength;
    const empty = new Uint8Array(0);
    const counted = bytesReleased();
    releaseChunks([half, tail, empty, ...(shared ? [pooled] : [])]);
    expect(bytesReleased()).toBe(counted);
    expect(half.byteLength).toBe(128 * KiB);
    expect(tail.every((b) => b === 3)).toBe(true);
    expect(pooled.toString()).toBe("small chunks come from Node's shared pool");
  });

  it("leaves a buffer that cannot be detached to its owner, without throwing", () => {
    // A WebAssembly memory's buffer (64 KiB a page) refuses both transfer() and postMessage's transfer list.
    const memory = new WebAssembly.Memory({ initial: 1 });
    const pinned = new Uint8Array(memory.buffer).fill(9);
    const [free] = parserLikeChunks(1);
    const counted = bytesReleased();
    expect(() => releaseChunks([pinned])).not.toThrow();
    expect(bytesReleased()).toBe(counted);
    expect(pinned.byteLength).toBe(64 * KiB);
    expect(pinned.every((b) => b === 9)).toBe(true);
    // Alongside one that can: that one is freed where each buffer is detached on its own (ArrayBuffer#transfer),
    // and kept with the pinned one where one message carries both (Node 20); either way only what was freed counts.
    releaseChunks([pinned, free!]);
    expect(pinned.every((b) => b === 9)).toBe(true);
    expect(bytesReleased() - counted).toBe(free!.byteLength === 0 ? 64 * KiB : 0);
  });
});

describe("markOwnedChunks", () => {
  it("marks that one stream: not a tee of it, nor other values", () => {
    const stream = markOwnedChunks(new ReadableStream<Uint8Array>());
    expect(hasOwnedChunks(stream)).toBe(true);
    const [a, b] = stream.tee();
    expect(hasOwnedChunks(a)).toBe(false);
    expect(hasOwnedChunks(b)).toBe(false);
    expect(hasOwnedChunks(new ReadableStream())).toBe(false);
    expect(hasOwnedChunks(new Uint8Array(4))).toBe(false);
    expect(hasOwnedChunks(undefined)).toBe(false);
  });
});
