/**
 * A bound on the dead objects V8's old generation keeps under a steady load.
 *
 * `npm start` runs Node with `--initial-old-space-size=64`, so that uploads
 * do not cost a full collection every few tens of MiB of body (see
 * docs/performance.md). With it, V8 runs no full collection until the old
 * generation holds 64 MiB, and under a steady load of small requests what
 * the young generation promotes (objects alive across two scavenges, dead
 * soon after) piles up there, and stays once the load is over. Measured
 * under wrk (manifest GETs): the old generation grew from 9.6 to 16.3 MB in
 * 25 s, of which a full collection freed 9 MB.
 *
 * So when Node exposes `gc()` (`--expose-gc`, also set by `npm start`), the
 * Node adapter counts requests, and every {@link CHECK_EVERY} of them (and
 * after each request-body collection, body.ts: a transfer makes few requests)
 * compares the old generation's size with its size after the last full
 * collection: once it has grown by {@link GROWTH}, it runs one. What lives
 * (code, caches) moves the base up, so it costs one collection per
 * {@link GROWTH} of growth, as V8's own heuristics would without the flag.
 * It stops at {@link BOUNDED_BELOW}: there the flag no longer holds V8 back,
 * and a larger heap (an application's, around the registry) is left to V8's
 * own incremental collections rather than to atomic ones forced from here.
 * Without `gc()`, or where `node:v8` has no space statistics, nothing is done.
 *
 * @module
 */
import * as v8 from "node:v8";

/** Requests between two looks at the old generation (a power of two). */
const CHECK_EVERY = 1024;
/** Growth of the old generation, in bytes, that makes a full collection. */
export const GROWTH = 4 * 1024 * 1024;
/** The old generation's size (bytes) from which nothing is forced: `npm start`'s `--initial-old-space-size=64`. */
export const BOUNDED_BELOW = 64 * 1024 * 1024;

/** A full collection: `gc()` without options (on Node 20, `gc({ type: "major" })` runs a scavenge). */
type Collect = () => void;
/** V8's `gc()`, there only when Node was started with `--expose-gc`. */
const collect = (globalThis as { gc?: unknown }).gc as Collect | undefined;
const canCollect = typeof collect === "function" && typeof (v8 as Partial<typeof v8>).getHeapSpaceStatistics === "function";

let requests = 0;
/** The old generation's size after the last full collection (or the smallest seen since); none before the first look. */
let base = Infinity;

/** Bytes used in the spaces that only a full collection frees (all but the young generation's). */
export function oldGenerationSize(): number {
  let used = 0;
  for (const space of v8.getHeapSpaceStatistics()) {
    if (space.space_name !== "new_space" && space.space_name !== "new_large_object_space") used += space.space_used_size;
  }
  return used;
}

/** Count one request; every {@link CHECK_EVERY}, collect the old generation when it has grown by {@link GROWTH}. */
export function countRequest(): void {
  if (!canCollect || (++requests & (CHECK_EVERY - 1)) !== 0) return;
  collectIfGrown();
}

/** The check itself (exported for tests): whether it ran a full collection. */
export function collectIfGrown(): boolean {
  if (!canCollect) return false;
  const used = oldGenerationSize();
  // Smaller than the base: the first look, or V8 collected by itself meanwhile.
  if (used < base) base = used;
  if (used - base < GROWTH || used >= BOUNDED_BELOW) return false;
  collect!();
  base = oldGenerationSize();
  return true;
}
