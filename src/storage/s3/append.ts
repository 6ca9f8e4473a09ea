/**
 * Appending: every piece of `partSize` bytes of an append is its own part
 * object `<key>!<offset>`, created with `If-None-Match: *` so that two racing
 * appends at one offset cannot both succeed; the object is the concatenation
 * of its part objects. An append holds the key's writer lock (see
 * `writer-lock.ts`), so appends and moves of one key exclude each other across
 * processes.
 *
 * The pieces of one append are uploaded `concurrency` at a time while the next
 * ones are read (and hashed by the registry), from buffers the driver's budget
 * grants (`budget.ts`). Their offsets are known before they are sent, so the
 * order in which they land does not matter; after a failure the parts beyond
 * the first failed one are removed, so a failed append leaves a contiguous
 * object that a retry continues at its `stat` size.
 *
 * @module
 */
import { md5 } from "@noble/hashes/legacy.js";
import { toHex } from "../../util/bytes.js";
import { StorageError, type AppendOptions, type StorageBody } from "../driver.js";
import { PieceReader, type Piece } from "./body.js";
import type { S3Context } from "./context.js";
import { deleteKeys } from "./delete.js";
import { copySourceHeaders } from "./multipart.js";
import { inspect } from "./parts.js";
import { putObject } from "./write.js";
import { acquireWriter, type WriterLock } from "./writer-lock.js";

/** The driver's `append`: the body's pieces become part objects after the object's end, under the writer lock. */
export async function append(ctx: S3Context, key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
  const { client, keys } = ctx;
  const signal = options?.signal;
  const expected = options?.expectedSize;
  const reader = new PieceReader(body, ctx.partSize, signal, ctx.concurrency + 1, ctx.budget);
  let lock: WriterLock | undefined;
  try {
    // The lock comes first, before any byte of the body: a body held open holds off moves.
    lock = await acquireWriter(client, keys.objectKey(key), "append", { wait: expected === undefined, signal });
    const stored = await inspect(ctx, key);
    const exists = stored.plain !== undefined || stored.parts.length > 0;
    if (!exists && options?.create === false) throw new StorageError("conflict", "the object does not exist");
    const size = stored.plain ? stored.plain.size : stored.partsSize;
    if (expected !== undefined && size !== expected) {
      throw new StorageError("conflict", `object size is ${size}, expected ${expected}`);
    }
    let piece = (await reader.next())!;
    if (piece.length === 0) {
      if (exists) return size;
      // Create an empty object (a plain one: the next append turns it into parts).
      const created = await putObject(ctx, keys.objectKey(key), piece, { "if-none-match": "*" }, signal, "append", [412]);
      void created.body?.cancel();
      return 0;
    }
    ctx.appended.add(key);
    const claimed: string[] = [];
    if (stored.plain) {
      // Part objects behind a plain object are a stale append's (a write replaced them): out of the way.
      if (stored.allParts.length > 0) await deleteKeys(ctx, stored.allParts.map((p) => p.key));
      if (stored.plain.size > 0) {
        // Appending to a written object: its bytes become the part at offset 0.
        await client.sendXml({ op: "append", method: "PUT", key: keys.partKey(key, 0), headers: copySourceHeaders(ctx, stored.plain.key, stored.plain.etag), signal });
        claimed.push(keys.partKey(key, 0));
      }
    }
    const total = await claimAll(ctx, key, size, piece, reader, claimed, signal);
    // Did a delete take the object (and our lock) meanwhile? Then take our parts back
    // rather than bring the object back. `delete` removes the lock first and lists
    // the parts last, so parts claimed before a check that passed are removed by it.
    const after = await inspect(ctx, key);
    if (after.lock?.etag !== lock.etag || after.partsSize !== total || (stored.plain && !after.plain)) {
      await deleteKeys(ctx, claimed);
      throw new StorageError("conflict", "the object was deleted or changed while this append was in progress");
    }
    if (stored.plain) await client.send({ op: "append", method: "DELETE", key: stored.plain.key, accept: [404] });
    return total;
  } catch (error) {
    await reader.cancel(error);
    throw error;
  } finally {
    reader.dispose();
    await lock?.release();
  }
}

/**
 * Claim the part objects of the body from offset `start`, beginning with
 * `first`, `ctx.concurrency` at a time; each claimed key is added to `claimed`.
 * The object's new size. On a failure, parts beyond the first failed offset
 * are removed before it is thrown.
 */
async function claimAll(ctx: S3Context, key: string, start: number, first: Piece, reader: PieceReader, claimed: string[], signal: AbortSignal | undefined): Promise<number> {
  const inFlight = new Set<Promise<void>>();
  const landed: number[] = [];
  let failedAt = Infinity;
  let failure: unknown;
  let total = start;
  try {
    for (let piece: Piece | undefined = first; piece && piece.length > 0 && failedAt === Infinity; piece = await reader.next()) {
      const offset = total;
      const current = piece;
      total += piece.length;
      const task = claimPart(ctx, key, offset, current, signal)
        .then((ok) => {
          // We are the one writer, so only a leftover (a part beyond a gap) can be in the way.
          if (!ok) throw new StorageError("conflict", `a part object is in the way at offset ${offset}`);
          landed.push(offset);
        })
        .catch((error: unknown) => {
          if (offset < failedAt) [failedAt, failure] = [offset, error];
        })
        .finally(() => current.release());
      const tracked: Promise<void> = task.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      while (inFlight.size >= ctx.concurrency) await Promise.race(inFlight);
    }
  } catch (error) {
    // The body failed: what landed before it is kept (an append may stop part way).
    if (failedAt === Infinity) [failedAt, failure] = [total, error];
  } finally {
    await Promise.all(inFlight);
  }
  for (const offset of landed) if (offset < failedAt) claimed.push(ctx.keys.partKey(key, offset));
  if (failedAt !== Infinity) {
    const beyond = landed.filter((offset) => offset > failedAt).map((offset) => ctx.keys.partKey(key, offset));
    if (beyond.length > 0) await deleteKeys(ctx, beyond).catch(() => {});
    throw failure;
  }
  return total;
}

/** Write one piece as the part object at `offset`, unless one is there already. */
export async function claimPart(ctx: S3Context, key: string, offset: number, piece: Piece, signal: AbortSignal | undefined): Promise<boolean> {
  const rawKey = ctx.keys.partKey(key, offset);
  const response = await putObject(ctx, rawKey, piece, { "if-none-match": "*" }, signal, "append", [412]);
  void response.body?.cancel();
  if (response.status !== 412) return true;
  // A retried PUT may have succeeded before: then the part holds our bytes.
  const head = await ctx.client.send({ op: "append", method: "HEAD", key: rawKey, accept: [404] });
  const etag = head.headers.get("etag")?.replace(/"/g, "");
  if (head.status === 200 && Number(head.headers.get("content-length")) === piece.length && etag && !etag.includes("-")) {
    const digest = md5.create();
    for (const chunk of piece.chunks) digest.update(chunk);
    if (toHex(digest.digest()) === etag) return true;
  }
  return false;
}
