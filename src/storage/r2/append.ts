/**
 * Appending: R2 objects cannot grow, so every append is stored as part
 * objects `<key>!<offset>` (one per piece of `partSize` bytes), each created
 * with `If-None-Match: *`; the object is their concatenation. An append holds
 * the key's writer lock (lock.ts) from before it reads a byte of its body, so
 * appends and moves of one key exclude each other across Workers.
 *
 * @module
 */
import { StorageError, type AppendOptions, type StorageBody } from "../driver.js";
import { discard } from "../streams.js";
import { call, objectKey, partKey, type R2Context } from "./context.js";
import { deleteAll } from "./delete.js";
import { acquireWriter, type WriterLock } from "./lock.js";
import { pieces } from "./pieces.js";
import { inspect, partsOf } from "./read.js";

const CREATE_ONLY = (): Headers => new Headers({ "if-none-match": "*" });

/** The driver's `append`. */
export async function append(ctx: R2Context, key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
  const signal = options?.signal;
  const expected = options?.expectedSize;
  const base = objectKey(ctx, key);
  let lock: WriterLock | undefined;
  let claimed: string[] = [];
  try {
    // The lock comes before any byte of the body: a body held open holds off moves.
    lock = await acquireWriter(ctx, base, "append", { wait: expected === undefined, signal });
    const stored = await inspect(ctx, key);
    const exists = stored.whole !== undefined || stored.parts.length > 0;
    if (!exists && options?.create === false) throw new StorageError("conflict", "the object does not exist");
    const size = stored.whole ? stored.whole.size : stored.partsSize;
    if (expected !== undefined && size !== expected) throw new StorageError("conflict", `object size is ${size}, expected ${expected}`);

    // Appending to an object written whole: its bytes become the first part objects.
    const whole = stored.whole && stored.whole.size > 0 ? stored.whole : undefined;
    let total = whole ? 0 : size;
    const sources: StorageBody[] = [];
    if (whole) {
      const got = await call("get", () => ctx.bucket.get(whole.key, { onlyIf: { etagMatches: whole.etag } }));
      if (!got || !("body" in got)) throw new StorageError("conflict", "the object changed while it was being appended to");
      sources.push(got.body);
    }
    sources.push(body);
    for (const source of sources) {
      for await (const piece of pieces(source, ctx.partSize, signal)) {
        const rawKey = partKey(ctx, key, total);
        // We are the one writer: only a leftover (a part beyond a gap) can be in the way.
        const put = await call("put", () => ctx.bucket.put(rawKey, piece, { onlyIf: CREATE_ONLY() }));
        if (!put) throw new StorageError("conflict", `a part object is in the way at offset ${total}`);
        claimed.push(rawKey);
        total += piece.byteLength;
      }
    }
    if (claimed.length === 0 && !exists) {
      // An empty append creates an empty object (written whole: the next append turns it into parts).
      await call("put", () => ctx.bucket.put(base, new Uint8Array(0), { onlyIf: CREATE_ONLY() }));
    }
    if (claimed.length === 0) return size;
    // Did a delete take the object (and our lock) meanwhile? Then take our parts
    // back rather than bring the object back.
    const after = await partsOf(ctx, key);
    if (after.lock?.etag !== lock.etag || after.partsSize !== total) {
      throw new StorageError("conflict", "the object was deleted or changed while this append was in progress");
    }
    // The parts are the object now; should removing the whole one fail, they stay.
    claimed = [];
    if (stored.whole) await call("delete", () => ctx.bucket.delete(base));
    return total;
  } catch (error) {
    void discard(body);
    if (claimed.length > 0) await deleteAll(ctx, claimed).catch(() => {});
    throw error;
  } finally {
    await lock?.release();
  }
}
