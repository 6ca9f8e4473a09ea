/**
 * The read side of the fs driver: `stat` (one lstat shared by the callers of
 * one turn of the event loop) and `read` (a byte stream over an open file, a
 * snapshot of the object as it was at open).
 *
 * @module
 */
import { constants, lstat, lstatSync, promises as fsp, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { ByteRange, ObjectInfo } from "../driver.js";
import type { FsContext } from "./context.js";
import { errno, isMissing, toStorageError } from "./errors.js";
import { pathOf } from "./paths.js";

/** Size of the chunks a read yields. */
const READ_CHUNK = 1024 * 1024;

/**
 * Closes the file of a read stream that was dropped (neither read to the end
 * nor cancelled) once the stream is collected. The driver contract asks the
 * consumer to do one or the other, but a framework that discards a response
 * body, or a test that looks only at a status, may not; left to itself the
 * FileHandle would be closed by the runtime's own collector, which Node warns
 * about (DEP0137) and Bun turns into an uncaught error that ends the process.
 * Holding the handle here keeps it alive until this callback closes it.
 */
const dropped = new FinalizationRegistry<FileHandle>((handle) => void handle.close().catch(() => {}));

/**
 * The driver's `stat`: the object's size and modification time, `undefined` when it does not exist.
 *
 * Stats of one file asked for in the same turn of the event loop share one lstat,
 * issued after all of them were asked (setImmediate), so every caller still sees
 * the file as it is after its call began. Under load (a tag pulled by many clients,
 * the manifest cache's revalidation) that is one lstat, not many.
 *
 * That lstat is synchronous unless `statOnEventLoop` is off: a stat of a
 * local file costs ~2 µs of the event loop, where a thread-pool round trip
 * costs 20-40 µs of CPU (the request, a pool thread woken, the completion)
 * and this runs twice per manifest GET. Not an async function either: a
 * caller pays one promise reaction.
 */
export function statObject(ctx: FsContext, key: string): Promise<ObjectInfo | undefined> {
  let file: string;
  try {
    file = pathOf(ctx, key);
  } catch (error) {
    return Promise.reject(error);
  }
  const inFlight = ctx.statsInFlight;
  let pending = inFlight.get(file);
  if (!pending) {
    pending = ctx.settled.then(() => new Promise<ObjectInfo | undefined>((resolve, reject) => {
      setImmediate(() => {
        inFlight.delete(file);
        lstatOnce(ctx, file, resolve, reject);
      });
    }), (error: unknown) => {
      // The root could not be made: every call fails with that, and nothing is left in the map.
      inFlight.delete(file);
      throw error;
    });
    inFlight.set(file, pending);
  }
  // Each caller gets its own object (callers may keep or change it).
  return pending.then(copyInfo);
}

/** The shared lstat of `file`: on the event loop, or through the thread pool when `statOnEventLoop` is off. */
function lstatOnce(ctx: FsContext, file: string, resolve: (info: ObjectInfo | undefined) => void, reject: (error: unknown) => void): void {
  if (!ctx.statOnEventLoop) {
    lstat(file, (error, info) => (error ? settleError(error, resolve, reject) : resolve(objectInfo(info))));
    return;
  }
  let info: Stats | undefined;
  try {
    info = lstatSync(file, { throwIfNoEntry: false });
  } catch (error) {
    settleError(error, resolve, reject);
    return;
  }
  resolve(info && objectInfo(info));
}

const objectInfo = (info: Stats): ObjectInfo | undefined => (info.isFile() ? { size: info.size, modified: info.mtime } : undefined);

/** A failed lstat: a path through a file (`ENOTDIR`) names nothing, as a missing one does. */
function settleError(error: unknown, resolve: (info: undefined) => void, reject: (error: unknown) => void): void {
  if (isMissing(error)) resolve(undefined);
  else reject(toStorageError(error, "cannot stat"));
}

const copyInfo = (info: ObjectInfo | undefined): ObjectInfo | undefined => info && { size: info.size, modified: new Date(info.modified.getTime()) };

/** The driver's `read`: a stream of the object's bytes in `range`, `undefined` when it does not exist. */
export async function readObject(ctx: FsContext, key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
  const file = pathOf(ctx, key);
  await ctx.settled;
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a symlink planted under the root is not an object.
    handle = await fsp.open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if (isMissing(error) || errno(error) === "ELOOP") return undefined;
    throw toStorageError(error, "cannot read");
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return undefined;
    }
    // The bounds are fixed now: the stream is a snapshot of the file as it is at open
    // (a later write renames a new file into place; this descriptor keeps the old one).
    const start = Math.min(range?.offset ?? 0, info.size);
    const end = range?.length === undefined ? info.size : Math.min(info.size, start + range.length);
    return fileStream(handle, start, end);
  } catch (error) {
    await handle.close().catch(() => {});
    throw toStorageError(error, "cannot read");
  }
}

/**
 * A pull-based byte stream over `[start, end)` of an open file; it closes the
 * handle when done or cancelled. A byte stream, so a consumer with a BYOB
 * reader (the Node adapter) has each read land in a buffer it reuses;
 * default readers get a fresh `READ_CHUNK` buffer per read, as before. No
 * read-ahead: the file is read when the consumer asks.
 */
function fileStream(handle: FileHandle, start: number, end: number): ReadableStream<Uint8Array> {
  let position = start;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    dropped.unregister(handle);
    await handle.close().catch(() => {});
  };
  const stream = new ReadableStream({
    type: "bytes",
    // No bigger than what is left: a 200-byte tag link or referrer entry would
    // otherwise cost a zeroed 1 MiB buffer (bench/growth.ts: referrers).
    autoAllocateChunkSize: Math.max(1, Math.min(READ_CHUNK, end - start)),
    async pull(controller) {
      const request = controller.byobRequest;
      const view = request?.view;
      // Always present with autoAllocateChunkSize; a fresh buffer otherwise.
      const target = view ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength) : new Uint8Array(Math.max(1, Math.min(READ_CHUNK, end - position)));
      const want = Math.min(target.byteLength, end - position);
      const finish = async (): Promise<void> => {
        await close();
        controller.close();
        request?.respond(0);
      };
      if (want <= 0) {
        await finish();
        return;
      }
      try {
        const { bytesRead } = await handle.read(target, 0, want, position);
        if (bytesRead === 0) {
          // Truncated under us (only an append's undo does that): end here.
          await finish();
          return;
        }
        position += bytesRead;
        if (request) request.respond(bytesRead);
        else controller.enqueue(target.subarray(0, bytesRead));
      } catch (error) {
        await close();
        controller.error(toStorageError(error, "cannot read"));
      }
    },
    async cancel() {
      await close();
    },
  }) as ReadableStream<Uint8Array>;
  dropped.register(stream, handle, handle);
  return stream;
}
