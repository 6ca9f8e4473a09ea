/**
 * Moving: R2 has no rename and its binding no server-side copy, so `move`
 * streams the source (a whole object, or the part objects of an append)
 * into the target through `storeWhole` (one PUT, or a multipart upload), then
 * deletes the source. It runs under the source's writer lock, so no append
 * can reach the bytes it publishes; the target appears whole at once.
 *
 * @module
 */
import { StorageError, type MoveOptions } from "../driver.js";
import { call, objectKey, type R2Context } from "./context.js";
import { deleteAll } from "./delete.js";
import { acquireWriter } from "./lock.js";
import { inspect, partsStream, partsOf } from "./read.js";
import { storeWhole } from "./write.js";

/** The driver's `move`. */
export async function move(ctx: R2Context, from: string, to: string, options?: MoveOptions): Promise<void> {
  const source = objectKey(ctx, from);
  const lock = await acquireWriter(ctx, source, "move");
  let published = false;
  try {
    const stored = await inspect(ctx, from);
    if (!stored.whole && stored.parts.length === 0) throw new StorageError("not_found", "no object to move");
    const size = stored.whole ? stored.whole.size : stored.partsSize;
    if (options?.expectedSize !== undefined && size !== options.expectedSize) {
      throw new StorageError("conflict", `object size is ${size}, expected ${options.expectedSize}`);
    }
    if (from === to) {
      await lock.release();
      return;
    }
    // Every read is pinned to the ETag listed under the lock: a replaced part fails the move.
    const whole = stored.whole;
    let body: ReadableStream<Uint8Array>;
    if (whole) {
      const got = await call("get", () => ctx.bucket.get(whole.key, { onlyIf: { etagMatches: whole.etag } }));
      if (!got || !("body" in got)) throw new StorageError("conflict", "the object changed while it was being moved");
      body = got.body;
    } else {
      body = partsStream(ctx, stored.parts, { offset: 0, length: size });
    }
    await storeWhole(ctx, objectKey(ctx, to), body, undefined);
    published = true;
    const stale = await partsOf(ctx, to);
    await deleteAll(ctx, [...(whole ? [whole.key] : []), ...stored.allParts.map((p) => p.key), ...stale.allParts.map((p) => p.key)]);
    await lock.release();
  } catch (error) {
    // A source that could not be deleted after publishing keeps its lock, so nothing is appended to the leftovers.
    if (!published) await lock.release();
    throw error;
  }
}
