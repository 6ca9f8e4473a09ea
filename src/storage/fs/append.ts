/**
 * `append`, run by the one writer of the object: the writer lock
 * (writer-lock.ts) is taken first, the bytes are added at the end of the file,
 * and a failure part way undoes them, so the object keeps the size the caller
 * knows. Appends are not fsynced; the `move` that publishes them is
 * (writeback.ts starts the flush early).
 *
 * @module
 */
import { constants, promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { StorageError, type AppendOptions, type StorageBody } from "../driver.js";
import { discard, throwIfAborted } from "../streams.js";
import type { FsContext } from "./context.js";
import { RETRIES, makeParents, syncDir } from "./dirs.js";
import { isMissing, toStorageError } from "./errors.js";
import { isFile, removeIfEmpty, truncateFile } from "./files.js";
import { WRITER_SUFFIX, pathOf } from "./paths.js";
import { writeBody } from "./write.js";
import { acquireWriterLock, type WriterLock } from "./writer-lock.js";

/** The driver's `append`: take the writer lock of the key, append, release. */
export async function appendObject(ctx: FsContext, key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
  const file = pathOf(ctx, key);
  const signal = options?.signal;
  if (signal?.aborted) discard(body);
  throwIfAborted(signal);
  await ctx.ready;
  // Only an append that may create the object makes its directories.
  const expected = options?.expectedSize;
  const create = options?.create !== false;
  const release = await takeWriter(ctx, file, create && (expected === undefined || expected === 0)).catch((error: unknown) => {
    discard(body);
    throw error;
  });
  if (release === "missing") {
    discard(body);
    throw new StorageError("conflict", "the object does not exist");
  }
  const stopRefresh = release.keepFresh();
  try {
    return await appendLocked(ctx, file, body, options);
  } finally {
    stopRefresh();
    await release.release();
  }
}

/**
 * Become the one writer of `file` (see writer-lock.ts). `"missing"` when the
 * file's directory does not exist and `create` is false.
 */
export async function takeWriter(ctx: FsContext, file: string, create: boolean): Promise<WriterLock | "missing"> {
  for (let attempt = 0; ; attempt++) {
    const lock = await acquireWriterLock(file + WRITER_SUFFIX, ctx.writersDir, ctx.staleLockMs);
    if (lock !== "missing" || !create) return lock;
    if (attempt >= RETRIES) throw new StorageError("conflict", "the object's directory keeps disappearing");
    await makeParents(ctx, file);
  }
}

/** The append itself, run by the one writer of `file` (see {@link takeWriter}). */
async function appendLocked(ctx: FsContext, file: string, body: StorageBody, options: AppendOptions | undefined): Promise<number> {
  let handle: FileHandle | undefined;
  let before = 0;
  let wrote = false;
  // We hold the writer lock, so nobody else creates or grows the file meanwhile.
  const existed = await isFile(file);
  if (!existed && options?.create === false) {
    discard(body);
    throw new StorageError("conflict", "the object does not exist");
  }
  try {
    try {
      handle = await fsp.open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o644);
    } catch (error) {
      // The directory went away after we locked (a concurrent delete): the object is gone.
      if (isMissing(error)) throw new StorageError("conflict", "the object was deleted meanwhile", { cause: error });
      throw error;
    }
    const info = await handle.stat();
    if (!info.isFile()) throw new StorageError("conflict", "the key is not an object");
    before = info.size;
    if (options?.expectedSize !== undefined && before !== options.expectedSize) {
      throw new StorageError("conflict", `object size is ${before}, expected ${options.expectedSize}`);
    }
    wrote = true;
    const written = await writeBody(handle, body, options?.signal, ctx.sync);
    const size = before + written.size;
    // No fsync here: the bytes become durable at the `move` that publishes them.
    await handle.close();
    handle = undefined;
    // A sync writeBody started covered the whole file: only the tail after it counts.
    if (written.unsynced < written.size) ctx.writeback.forget(file);
    ctx.writeback.afterAppend(file, written.unsynced);
    if (ctx.sync && !existed) await syncDir(path.dirname(file));
    return size;
  } catch (error) {
    if (handle) {
      // Undo a partial append so that the object keeps the size the caller knows (on a
      // full disk, the bytes that did fit). By path when the handle is unusable: a close
      // that reports a deferred write error (NFS) leaves it closed. We hold the writer
      // lock, so nobody else has grown the file meanwhile.
      if (wrote) await handle.truncate(before).catch(() => truncateFile(file, before)).catch(() => {});
      await handle.close().catch(() => {});
      // An append that created the file and then failed leaves no object behind.
      if (!existed) await removeIfEmpty(file);
    }
    if (!wrote) discard(body);
    throw toStorageError(error, "cannot append to");
  }
}
