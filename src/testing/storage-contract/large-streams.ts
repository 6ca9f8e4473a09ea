/**
 * The large-stream round trip: a driver streams a large object in and out
 * without holding it (RSS stays flat), and the bytes come back intact.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { StorageContractContext } from "./context.js";
import { MiB, randomBytes } from "./streams-fixtures.js";
import type { LargeStreamStats, StorageContractOptions } from "./types.js";

/** The large-stream test, sized and checked as `options` say (see {@link StorageContractOptions}). */
export function largeStreamTests(ctx: StorageContractContext, options: StorageContractOptions): void {
  const largeBytes = options.largeBytes ?? 256 * MiB;
  const checkMemory = options.checkMemory ?? true;
  const rssLimit = options.rssLimit ?? 64 * MiB;
  describe("large streams", () => {
    it(
      `writes and reads back ${Math.round(largeBytes / MiB)} MiB streaming` + (checkMemory ? " with flat memory" : ""),
      async () => {
        const source = generated(largeBytes);
        collectGarbage();
        let rss0 = rss();
        let peak = rss0;
        let t0 = performance.now();
        const written = await ctx.store.write("large/object", source.stream(() => {
          peak = Math.max(peak, rss());
        }));
        peak = Math.max(peak, rss());
        const writeStats = stats("write", largeBytes, performance.now() - t0, peak - rss0);
        options.onLargeStreamStats?.(writeStats);
        expect(written).toBe(largeBytes);
        expect((await ctx.store.stat("large/object"))?.size).toBe(largeBytes);
        if (checkMemory) expect(writeStats.rssGrowth).toBeLessThan(rssLimit);

        collectGarbage();
        rss0 = rss();
        peak = rss0;
        t0 = performance.now();
        const stream = await ctx.store.read("large/object");
        expect(stream).toBeDefined();
        const hash = createHash("sha256");
        let size = 0;
        const reader = stream!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          hash.update(value);
          size += value.byteLength;
          peak = Math.max(peak, rss());
        }
        const readStats = stats("read", size, performance.now() - t0, peak - rss0);
        options.onLargeStreamStats?.(readStats);
        expect(size).toBe(largeBytes);
        expect(hash.digest("hex")).toBe(source.digest());
        if (checkMemory) expect(readStats.rssGrowth).toBeLessThan(rssLimit);
      },
      options.largeTimeout ?? 300_000,
    );
  });
}

/**
 * The process's resident set size, or `NaN` on a runtime that has none to
 * tell (workerd): then only `checkMemory: false` can pass.
 */
function rss(): number {
  const usage = (globalThis as { process?: { memoryUsage?: { (): { rss: number }; rss?: () => number } } }).process?.memoryUsage;
  if (typeof usage?.rss === "function") return usage.rss();
  return typeof usage === "function" ? usage().rss : NaN;
}

/** Collect garbage first when node runs with --expose-gc, so RSS is measured from a clean start. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function stats(phase: "write" | "read", bytes: number, milliseconds: number, rssGrowth: number): LargeStreamStats {
  return { phase, bytes, milliseconds, bytesPerSecond: (bytes / milliseconds) * 1000, rssGrowth };
}

/**
 * A pull-based stream of `total` pseudo-random bytes in 1 MiB chunks, generated
 * on demand (nothing is held), hashed as it is produced.
 */
function generated(total: number): { stream: (onChunk: () => void) => ReadableStream<Uint8Array>; digest: () => string } {
  const block = randomBytes(MiB);
  const hash = createHash("sha256");
  let digest: string | undefined;
  return {
    stream(onChunk) {
      let produced = 0;
      let index = 0;
      return new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            onChunk();
            if (produced >= total) {
              digest = hash.digest("hex");
              controller.close();
              return;
            }
            const size = Math.min(MiB, total - produced);
            // Each chunk differs (its index in front), so a misplaced chunk changes the digest.
            const chunk = new Uint8Array(size);
            chunk.set(block.subarray(0, size));
            new DataView(chunk.buffer).setUint32(0, index++ % 2 ** 32);
            hash.update(chunk);
            produced += size;
            controller.enqueue(chunk);
          },
        },
        { highWaterMark: 1 },
      );
    },
    digest() {
      if (digest === undefined) throw new Error("the stream was not read to the end");
      return digest;
    },
  };
}
