/**
 * Writing bodies to files: `write` (a whole object, through a temporary file
 * renamed into place) and {@link writeBody}, the batched, overlapped copy of a
 * body into an open file that `write` and `append` share.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import type { StorageBody, WriteOptions } from "../driver.js";
import { bodyChunks, discard, throwIfAborted } from "../streams.js";
import { hasOwnedChunks } from "../../runtime/adapter-capabilities.js";
import { releaseChunks } from "../../util/owned-chunks.js";
import type { FsContext } from "./context.js";
import { pruneEmptyDirs, renameInto } from "./dirs.js";
import { errno, toStorageError } from "./errors.js";
import { pathOf } from "./paths.js";
import { EARLY_SYNC } from "./writeback.js";

/** Batch this many bytes into one write(v) call: fewer syscalls, close to disk speed. */
const WRITE_BATCH = 1024 * 1024;

/**
 * The driver's `write`: the body goes to a temporary file under `~tmp/`, is
 * fsynced, then renamed onto the key, so a reader sees the old object or the
 * whole new one and a crash leaves at worst a stray temporary file.
 */
export async function writeObject(ctx: FsContext, key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
  const file = pathOf(ctx, key);
  const signal = options?.signal;
  if (signal?.aborted) discard(body);
  throwIfAborted(signal);
  await ctx.ready;
  const temp = path.join(ctx.tmpDir, randomUUID());
  let handle: FileHandle | undefined;
  let placing = false;
  try {
    handle = await fsp.open(temp, "wx", 0o644).catch(async (error: unknown) => {
      // The temp directory was removed by hand while we ran: make it again, once.
      if (errno(error) !== "ENOENT") throw error;
      await fsp.mkdir(ctx.tmpDir, { recursive: true });
      return fsp.open(temp, "wx", 0o644);
    });
    const { size } = await writeBody(handle, body, signal, ctx.sync);
    if (ctx.sync) await handle.sync();
    await handle.close();
    handle = undefined;
    // Last chance to give up: after the rename the new object is visible.
    throwIfAborted(signal);
    placing = true;
    await renameInto(ctx, temp, file);
    return size;
  } catch (error) {
    await handle?.close().catch(() => {});
    await fsp.rm(temp, { force: true }).catch(() => {});
    // renameInto may have made some of the key's directories before failing (mkdir or
    // the rename itself can meet a full disk): leave no empty directories behind.
    if (placing) await pruneEmptyDirs(ctx, path.dirname(file));
    throw toStorageError(error, "cannot write");
  }
}

/**
 * Write a body to an open file, batching small chunks. Resolves to the bytes
 * written and, of those, the bytes written since the last early sync started.
 */
export async function writeBody(handle: FileHandle, body: StorageBody, signal: AbortSignal | undefined, sync = false): Promise<{ size: number; unsynced: number }> {
  let size = 0;
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  // One write in flight while the next batch is read from the body: disk and source overlap.
  let inFlight: Promise<unknown> = Promise.resolve();
  // With fsync on, a large body is handed to the disk as it arrives: a background
  // fdatasync every EARLY_SYNC bytes (one at a time) starts the writeback early, so the
  // fsync that makes the object durable (write, or move for an upload) finds little left
  // to flush instead of the whole body. Durability is unchanged: that fsync still runs.
  let unsynced = 0;
  let syncing: Promise<unknown> | undefined;
  // A body whose chunks are ours (util/owned-chunks.ts): each batch's chunks are freed once written.
  const release = hasOwnedChunks(body);
  const flush = async (): Promise<void> => {
    const chunks = batch;
    const bytes = batchBytes;
    batch = [];
    batchBytes = 0;
    await inFlight;
    inFlight = release ? writeAll(handle, chunks).then(() => releaseChunks(chunks)) : writeAll(handle, chunks);
    // Surface a write error promptly; the next flush awaits it again.
    inFlight.catch(() => {});
    unsynced += bytes;
    if (sync && unsynced >= EARLY_SYNC && !syncing) {
      unsynced = 0;
      const previous = inFlight;
      syncing = previous.then(() => handle.datasync()).finally(() => {
        syncing = undefined;
      });
      syncing.catch(() => {});
    }
  };
  try {
    for await (const chunk of bodyChunks(body, signal)) {
      batch.push(chunk);
      batchBytes += chunk.byteLength;
      size += chunk.byteLength;
      if (batchBytes >= WRITE_BATCH) await flush();
    }
    if (batchBytes > 0) await flush();
  } finally {
    // Never leave a write (or an early sync) running against a handle the caller is about to close.
    await inFlight.catch(() => {});
    await syncing?.catch(() => {});
  }
  await inFlight;
  return { size, unsynced };
}

/** writev until every byte is written (writev may write less than asked). */
async function writeAll(handle: FileHandle, chunks: Uint8Array[]): Promise<void> {
  let pending = chunks;
  while (pending.length > 0) {
    const { bytesWritten } = await handle.writev(pending);
    let skip = bytesWritten;
    const rest: Uint8Array[] = [];
    for (const chunk of pending) {
      if (skip >= chunk.byteLength) {
        skip -= chunk.byteLength;
        continue;
      }
      rest.push(skip > 0 ? chunk.subarray(skip) : chunk);
      skip = 0;
    }
    pending = rest;
  }
}
