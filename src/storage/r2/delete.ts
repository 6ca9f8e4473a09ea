/**
 * Deleting: one key (its writer lock first, then the object, then its part
 * objects), a whole prefix, and bucket keys in batches.
 *
 * @module
 */
import { call, MARK, objectKey, type R2Context } from "./context.js";
import { lockKey } from "./lock.js";
import { listRaw } from "./list.js";

/** R2 deletes at most 1000 keys in one call. */
const BATCH = 1000;

/** Delete bucket keys, 1000 a call. */
export async function deleteAll(ctx: R2Context, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += BATCH) {
    const batch = keys.slice(i, i + BATCH);
    await call("delete", () => ctx.bucket.delete(batch));
  }
}

/**
 * The driver's `delete`. The lock goes first, so an append in progress finds
 * at its end that its lock is gone and takes its parts back rather than bring
 * the object back; the part objects are listed last, after it could have
 * written them.
 */
export async function deleteKey(ctx: R2Context, key: string): Promise<void> {
  const base = objectKey(ctx, key);
  await call("delete", () => ctx.bucket.delete([lockKey(base), base]));
  const parts: string[] = [];
  for await (const object of listRaw(ctx, base + MARK)) parts.push(object.key);
  await deleteAll(ctx, parts);
}

/**
 * The driver's `deletePrefix`: every object under `prefix/`, locks and part
 * objects included. It lists again until nothing is left, so parts written
 * by an append whose lock was just removed go too.
 */
export async function deletePrefix(ctx: R2Context, prefix: string): Promise<void> {
  const raw = objectKey(ctx, prefix + "/");
  for (let round = 0; round < 10; round++) {
    const keys: string[] = [];
    for await (const object of listRaw(ctx, raw)) keys.push(object.key);
    if (keys.length === 0) return;
    // Locks first: an append in progress under the prefix then fails its last check.
    const locks = keys.filter((k) => k.endsWith(MARK + "writer"));
    await deleteAll(ctx, locks);
    await deleteAll(ctx, keys.filter((k) => !k.endsWith(MARK + "writer")));
  }
}
