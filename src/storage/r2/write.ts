/**
 * Writing an object whole: one PUT when the body fits in one part, else a
 * multipart upload (parts of `partSize`, `concurrency` at a time), aborted on
 * any failure, so that the object appears whole or not at all.
 *
 * @module
 */
import type { StorageBody, WriteOptions } from "../driver.js";
import { throwIfAborted } from "../streams.js";
import type { R2MultipartUploadLike, R2UploadedPartInfo } from "./bucket.js";
import { call, objectKey, type R2Context } from "./context.js";
import { deleteAll } from "./delete.js";
import { pieces } from "./pieces.js";
import { partsOf } from "./read.js";

/** The driver's `write`: store `body` under `key`, then drop the part objects of an earlier append. */
export async function write(ctx: R2Context, key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
  const size = await storeWhole(ctx, objectKey(ctx, key), body, options?.signal);
  const stale = await partsOf(ctx, key);
  if (stale.allParts.length > 0) await deleteAll(ctx, stale.allParts.map((p) => p.key));
  return size;
}

/** Store `body` as the bucket object `rawKey`, atomically; resolves to its size. */
export async function storeWhole(ctx: R2Context, rawKey: string, body: StorageBody, signal: AbortSignal | undefined): Promise<number> {
  const source = pieces(body, ctx.partSize, signal);
  try {
    const first = await source.next();
    const second = first.done ? undefined : await source.next();
    if (!second || second.done) {
      const bytes = first.done ? new Uint8Array(0) : first.value;
      throwIfAborted(signal);
      await call("put", () => ctx.bucket.put(rawKey, bytes));
      return bytes.byteLength;
    }
    return await multipart(ctx, rawKey, [first.value!, second.value], source, signal);
  } finally {
    await source.return(undefined);
  }
}

/** A multipart upload of `head` and then the rest of `source`, completed only when every part went up. */
async function multipart(
  ctx: R2Context,
  rawKey: string,
  head: Uint8Array[],
  source: AsyncGenerator<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<number> {
  const upload: R2MultipartUploadLike = await call("createMultipartUpload", () => ctx.bucket.createMultipartUpload(rawKey));
  const done: R2UploadedPartInfo[] = [];
  const inFlight = new Set<Promise<void>>();
  let size = 0;
  let failure: unknown;
  const send = (partNumber: number, bytes: Uint8Array): void => {
    const sending = call("uploadPart", () => upload.uploadPart(partNumber, bytes)).then(
      (part) => void done.push(part),
      (error: unknown) => void (failure ??= error),
    );
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  };
  try {
    let partNumber = 0;
    const next = async (): Promise<Uint8Array | undefined> => head.shift() ?? (await source.next()).value ?? undefined;
    for (let bytes = await next(); bytes; bytes = await next()) {
      size += bytes.byteLength;
      send(++partNumber, bytes);
      // Hold at most `concurrency` parts in flight (and one more being read).
      while (inFlight.size >= ctx.concurrency) await Promise.race(inFlight);
      if (failure) throw failure;
    }
    await Promise.all(inFlight);
    if (failure) throw failure;
    throwIfAborted(signal);
    done.sort((a, b) => a.partNumber - b.partNumber);
    await call("completeMultipartUpload", () => upload.complete(done));
    return size;
  } catch (error) {
    await Promise.allSettled(inFlight);
    await upload.abort().catch(() => {});
    throw error;
  }
}
