/**
 * The filesystem storage driver (Node only).
 *
 * A key maps to the file `<root>/<key>`, so the tree on disk reads like the
 * keys. Writes go to a temporary file under `<root>/~tmp/` (a name no valid key
 * can take, so it never shows up in a listing), are fsynced and then renamed
 * into place: a reader sees the old object or the whole new one, and a crash
 * leaves at worst a stray temporary file, never a partial object.
 *
 * Limits that come from the filesystem, not from the contract:
 * - A key cannot be both an object and the prefix of other objects (`a/b` and
 *   `a/b/c`): a file cannot be a directory. Such a write fails with
 *   `StorageError("conflict")`; the registry's layout never does it.
 * - On case-insensitive filesystems, keys differing only in case collide.
 * - One writer per key, across processes: an append or a move of `<key>` first
 *   creates the lock file `<key>~writer` with `O_EXCL` (`~` is in no key, so it
 *   never lists) and removes it when done; a second append or a move meanwhile
 *   finds it and fails with `conflict`. A lock left by a killed process is
 *   taken over once its holder is known to be gone (writer-lock.ts).
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { constants, promises as fsp, type Dirent } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import {
  StorageError,
  isValidKey,
  type AppendOptions,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type MoveOptions,
  type ObjectInfo,
  type StorageBody,
  type StorageDriver,
  type WriteOptions,
} from "../driver.js";
import { bodyChunks, discard, throwIfAborted } from "../streams.js";
import { isNoSpace, noSpaceError } from "./no-space.js";
import { acquireWriterLock, type WriterLock } from "./writer-lock.js";

/** Options for {@link fsStorage}. */
export interface FsStorageOptions {
  /** The directory that holds the objects. Created when missing. */
  root: string;
  /**
   * Flush file data and directory entries to disk before a write or move
   * resolves, so that what was acknowledged survives a power loss. Appended
   * bytes (an upload being assembled, a temporary until it is moved into
   * place) are flushed once, by the `move` that publishes them, not by every
   * append: a power loss before the move can shorten the unfinished object,
   * which the registry sees by its size (every append passes `expectedSize`,
   * and the commit checks the size against the signed upload state), so the
   * client restarts the upload; a moved object is always whole and durable.
   * Default `true`; turn it off only for throw-away data (tests, caches).
   */
  fsync?: boolean;
  /**
   * Temporary files older than this are removed when the driver starts (left
   * over by a crash). Default 24 hours. A write that is still running keeps its
   * file's modification time fresh, so only abandoned files are removed.
   */
  staleTempMs?: number;
  /**
   * A writer lock (see the module comment) held by a process on another host
   * that has not been refreshed for this long is taken to be left by a crash.
   * Locks of processes on this host are checked by pid at once. Default 10 minutes.
   */
  staleLockMs?: number;
}

/** Name of the directory that holds in-flight writes. `~` is not allowed in keys. */
const TMP_DIR = "~tmp";
/** Suffix of the lock file an append or move holds on its key (see the module comment). */
const WRITER_SUFFIX = "~writer";
/** Batch this many bytes into one write(v) call: fewer syscalls, close to disk speed. */
const WRITE_BATCH = 1024 * 1024;
/** With fsync on, start the disk writeback of a large body every this many bytes (see writeBody). */
const EARLY_SYNC = 64 * 1024 * 1024;
/** Size of the chunks a read yields. */
const READ_CHUNK = 1024 * 1024;
/** How often to retry when a concurrent delete removes a directory we are writing into. */
const RETRIES = 5;
/** A directory entry name that can be a key segment (see `assertValidKey`). */
const SEGMENT = /^[A-Za-z0-9._@:+=-]+$/;

/**
 * Create a driver that stores objects as files under `options.root`.
 *
 * @example
 * ```ts
 * import { fsStorage } from "registry-kit/storage/fs";
 * const storage = fsStorage({ root: "/var/lib/registry" });
 * ```
 */
export function fsStorage(options: FsStorageOptions): StorageDriver {
  const root = path.resolve(options.root);
  // What every object path starts with (root "/" already ends with the separator).
  const inside = root.endsWith(path.sep) ? root : root + path.sep;
  const tmpDir = path.join(root, TMP_DIR);
  const sync = options.fsync ?? true;
  const staleTempMs = options.staleTempMs ?? 24 * 60 * 60 * 1000;
  const staleLockMs = options.staleLockMs ?? 10 * 60 * 1000;
  const pendingStats = new Map<string, Promise<ObjectInfo | undefined>>();

  // Created once; every method waits for it. The sweep of stale temp files runs beside it.
  const ready = fsp.mkdir(tmpDir, { recursive: true }).then(
    () => undefined,
    (error: unknown) => {
      throw toStorageError(error, "cannot create the root for");
    },
  );
  const sweep = ready.then(() => removeStaleTemps(tmpDir, staleTempMs)).catch(() => {});
  // A failed mkdir surfaces on the first call, not as an unhandled rejection.
  ready.catch(() => {});

  /** The path of a key. Keys are validated by `checked`; this is defence in depth. */
  function pathOf(key: string): string {
    // A valid key (no empty, "." or ".." segments) is already a normal relative path:
    // joined as is on POSIX; resolved (and re-checked) elsewhere or when it is not valid.
    if (path.sep === "/" && isValidKey(key)) return `${inside}${key}`;
    const full = path.resolve(root, ...key.split("/"));
    if (!full.startsWith(inside)) throw new StorageError("invalid_key", "storage key escapes the root");
    return full;
  }

  /** Create the parent directories of `file`, fsyncing the directories that gained an entry. */
  async function makeParents(file: string): Promise<void> {
    const dir = path.dirname(file);
    let first: string | undefined;
    try {
      first = await mkdirs(dir);
    } catch (error) {
      throw toStorageError(error, "cannot create the directories of");
    }
    if (first && sync) {
      // `dir` gets its entry at the rename (synced there); each directory from the parent
      // of the first one created down to `dir`'s parent gained a new subdirectory.
      const top = path.dirname(first);
      for (let d = path.dirname(dir); ; d = path.dirname(d)) {
        await syncDir(d);
        if (d === top || d === root || d === path.dirname(d)) break;
      }
    }
  }

  /**
   * Rename `from` onto `to`, creating `to`'s directories. Retries when a
   * concurrent delete removes an empty directory on the way, and replaces an
   * empty directory left at `to` by deleted children.
   */
  async function renameInto(from: string, to: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await makeParents(to);
      try {
        await fsp.rename(from, to);
        if (sync) await syncDir(path.dirname(to));
        return;
      } catch (error) {
        const code = errno(error);
        if (attempt < RETRIES && code === "ENOENT" && (await isFile(from))) continue;
        if (attempt < RETRIES && (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST")) {
          // A directory is in the way: fine if empty (its objects were deleted), a conflict otherwise.
          const removed = await fsp.rmdir(to).then(() => true, () => false);
          if (removed) continue;
        }
        throw toStorageError(error, "cannot store");
      }
    }
  }

  /** Remove empty directories from `dir` (which may not exist) up to (not including) the root. Best effort. */
  async function pruneEmptyDirs(dir: string): Promise<void> {
    for (let d = dir; d.startsWith(inside) && d !== tmpDir; d = path.dirname(d)) {
      try {
        await fsp.rmdir(d);
      } catch (error) {
        // Never made (a write that failed part way down its directories) or gone already:
        // its parent may still be empty.
        if (errno(error) === "ENOENT") continue;
        return; // not empty, or in use: leave it
      }
    }
  }

  // Appends are not fsynced one by one (the `move` that publishes an upload does it), so
  // a chunked upload would leave the whole object for that last fsync to flush while the
  // client waits. Instead, every EARLY_SYNC bytes appended to a file start a background
  // fdatasync of it, not awaited by the append: the writeback overlaps the next chunks.
  const appendedSinceSync = new Map<string, number>();
  const syncingFiles = new Set<string>();
  function afterAppend(file: string, bytes: number): void {
    if (!sync) return;
    const total = (appendedSinceSync.get(file) ?? 0) + bytes;
    if (total < EARLY_SYNC || syncingFiles.has(file)) {
      appendedSinceSync.set(file, total);
      return;
    }
    appendedSinceSync.set(file, 0);
    syncingFiles.add(file);
    // Best effort: the file may be moved or deleted meanwhile, and durability never depends on it.
    void syncFile(file, true)
      .catch(() => {})
      .finally(() => syncingFiles.delete(file));
  }
  const forgetAppends = (file: string): void => void appendedSinceSync.delete(file);

  /**
   * Become the one writer of `file` (see writer-lock.ts). `"missing"` when the
   * file's directory does not exist and `create` is false.
   */
  async function takeWriter(file: string, create: boolean): Promise<WriterLock | "missing"> {
    for (let attempt = 0; ; attempt++) {
      const lock = await acquireWriterLock(file + WRITER_SUFFIX, tmpDir, staleLockMs);
      if (lock !== "missing" || !create) return lock;
      if (attempt >= RETRIES) throw new StorageError("conflict", "the object's directory keeps disappearing");
      await makeParents(file);
    }
  }

  /** The append itself, run by the one writer of `file` (see {@link takeWriter}). */
  async function appendLocked(file: string, body: StorageBody, options: AppendOptions | undefined): Promise<number> {
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
      const written = await writeBody(handle, body, options?.signal, sync);
      const size = before + written.size;
      // No fsync here: the bytes become durable at the `move` that publishes them.
      await handle.close();
      handle = undefined;
      // A sync writeBody started covered the whole file: only the tail after it counts.
      if (written.unsynced < written.size) forgetAppends(file);
      afterAppend(file, written.unsynced);
      if (sync && !existed) await syncDir(path.dirname(file));
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

  return {
    name: "fs",

    async stat(key: string): Promise<ObjectInfo | undefined> {
      const file = pathOf(key);
      await ready;
      // Stats of one file asked for in the same turn of the event loop share one lstat,
      // issued after all of them were asked (setImmediate), so every caller still sees
      // the file as it is after its call began. Under load (a tag pulled by many clients,
      // the manifest cache's revalidation) that is one thread-pool round trip, not many.
      let pending = pendingStats.get(file);
      if (!pending) {
        pending = new Promise<ObjectInfo | undefined>((resolve, reject) => {
          setImmediate(() => {
            pendingStats.delete(file);
            fsp.lstat(file).then(
              (info) => resolve(info.isFile() ? { size: info.size, modified: info.mtime } : undefined),
              (error: unknown) => (isMissing(error) ? resolve(undefined) : reject(toStorageError(error, "cannot stat"))),
            );
          });
        });
        pendingStats.set(file, pending);
      }
      const info = await pending;
      // Each caller gets its own object (callers may keep or change it).
      return info && { size: info.size, modified: new Date(info.modified.getTime()) };
    },

    async read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
      const file = pathOf(key);
      await ready;
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
    },

    async write(key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
      const file = pathOf(key);
      const signal = options?.signal;
      if (signal?.aborted) discard(body);
      throwIfAborted(signal);
      await ready;
      const temp = path.join(tmpDir, randomUUID());
      let handle: FileHandle | undefined;
      let placing = false;
      try {
        handle = await fsp.open(temp, "wx", 0o644).catch(async (error: unknown) => {
          // The temp directory was removed by hand while we ran: make it again, once.
          if (errno(error) !== "ENOENT") throw error;
          await fsp.mkdir(tmpDir, { recursive: true });
          return fsp.open(temp, "wx", 0o644);
        });
        const { size } = await writeBody(handle, body, signal, sync);
        if (sync) await handle.sync();
        await handle.close();
        handle = undefined;
        // Last chance to give up: after the rename the new object is visible.
        throwIfAborted(signal);
        placing = true;
        await renameInto(temp, file);
        return size;
      } catch (error) {
        await handle?.close().catch(() => {});
        await fsp.rm(temp, { force: true }).catch(() => {});
        // renameInto may have made some of the key's directories before failing (mkdir or
        // the rename itself can meet a full disk): leave no empty directories behind.
        if (placing) await pruneEmptyDirs(path.dirname(file));
        throw toStorageError(error, "cannot write");
      }
    },

    async append(key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
      const file = pathOf(key);
      const signal = options?.signal;
      if (signal?.aborted) discard(body);
      throwIfAborted(signal);
      await ready;
      // Only an append that may create the object makes its directories.
      const expected = options?.expectedSize;
      const create = options?.create !== false;
      const release = await takeWriter(file, create && (expected === undefined || expected === 0)).catch((error: unknown) => {
        discard(body);
        throw error;
      });
      if (release === "missing") {
        discard(body);
        throw new StorageError("conflict", "the object does not exist");
      }
      const stopRefresh = release.keepFresh();
      try {
        return await appendLocked(file, body, options);
      } finally {
        stopRefresh();
        await release.release();
      }
    },

    async move(from: string, to: string, options?: MoveOptions): Promise<void> {
      const source = pathOf(from);
      const target = pathOf(to);
      await ready;
      const release = await takeWriter(source, false);
      if (release === "missing") throw new StorageError("not_found", "no object to move");
      try {
        const info = await fsp.lstat(source).catch(() => undefined);
        if (!info?.isFile()) throw new StorageError("not_found", "no object to move");
        if (options?.expectedSize !== undefined && info.size !== options.expectedSize) {
          throw new StorageError("conflict", `object size is ${info.size}, expected ${options.expectedSize}`);
        }
        if (source === target) return;
        forgetAppends(source);
        // Appends are not synced one by one: flush the object's bytes once, before it becomes visible.
        if (sync) await syncFile(source);
        // A source that vanishes meanwhile (a delete) surfaces as ENOENT, mapped to "not_found".
        await renameInto(source, target);
      } finally {
        await release.release();
      }
      if (sync) await syncDir(path.dirname(source)).catch(() => {});
      await pruneEmptyDirs(path.dirname(source));
    },

    async delete(key: string): Promise<void> {
      const file = pathOf(key);
      await ready;
      try {
        const info = await fsp.lstat(file);
        if (info.isDirectory()) return; // a prefix, not an object
        forgetAppends(file);
        await fsp.unlink(file);
      } catch (error) {
        if (isMissing(error) || errno(error) === "EISDIR" || errno(error) === "EPERM") return;
        throw toStorageError(error, "cannot delete");
      }
      // An acknowledged delete (a tag, a user) must not come back after a power loss.
      if (sync) await syncDir(path.dirname(file)).catch(() => {});
      await pruneEmptyDirs(path.dirname(file));
    },

    async deletePrefix(prefix: string): Promise<void> {
      const dir = pathOf(prefix);
      await ready;
      for (let attempt = 0; ; attempt++) {
        try {
          const info = await fsp.lstat(dir);
          if (!info.isDirectory()) return; // an object named like the prefix is not under it
          for (const file of appendedSinceSync.keys()) if (file.startsWith(dir + path.sep)) forgetAppends(file);
          await fsp.rm(dir, { recursive: true, force: true });
          break;
        } catch (error) {
          if (isMissing(error)) break;
          // A concurrent writer added a file while we removed the tree: go again.
          if (attempt < RETRIES && errno(error) === "ENOTEMPTY") continue;
          throw toStorageError(error, "cannot delete");
        }
      }
      await pruneEmptyDirs(path.dirname(dir));
    },

    async list(prefix: string, options?: ListOptions): Promise<ListPage> {
      const dir = pathOf(prefix);
      await ready;
      const limit = options?.limit ?? Infinity;
      const keys: string[] = [];
      for await (const key of walk(dir, prefix + "/", options?.after)) {
        if (keys.length >= limit) return { keys, truncated: true };
        keys.push(key);
      }
      return { keys, truncated: false };
    },

    async close(): Promise<void> {
      await sweep;
    },
  };
}

/**
 * Yield the keys of the files under `dir` in lexical order of the full key,
 * only those greater than `after`. Subtrees that hold only smaller keys are not
 * read.
 */
async function* walk(dir: string, keyPrefix: string, after: string | undefined): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return;
    throw toStorageError(error, "cannot list");
  }
  // Sort by what each entry contributes to the full key: a directory `d` stands for
  // keys starting `d/`, and "/" sorts after "-", "." and "+" (so `a-b` < `a/x`).
  const items = entries
    .filter((entry) => SEGMENT.test(entry.name) && (entry.isFile() || entry.isDirectory()))
    .map((entry) => ({ name: entry.name, dir: entry.isDirectory(), sortKey: entry.isDirectory() ? entry.name + "/" : entry.name }))
    .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  for (const item of items) {
    const key = keyPrefix + item.sortKey;
    if (item.dir) {
      // Every key below starts with `key`; if `after` is past all of them, skip the subtree.
      if (after !== undefined && after > key && !after.startsWith(key)) continue;
      yield* walk(path.join(dir, item.name), key, after);
    } else if (after === undefined || key > after) {
      yield key;
    }
  }
}

/**
 * Write a body to an open file, batching small chunks. Resolves to the bytes
 * written and, of those, the bytes written since the last early sync started.
 */
async function writeBody(handle: FileHandle, body: StorageBody, signal: AbortSignal | undefined, sync = false): Promise<{ size: number; unsynced: number }> {
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
  const flush = async (): Promise<void> => {
    const chunks = batch;
    const bytes = batchBytes;
    batch = [];
    batchBytes = 0;
    await inFlight;
    inFlight = writeAll(handle, chunks);
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
    await handle.close().catch(() => {});
  };
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: READ_CHUNK,
    async pull(controller) {
      const request = controller.byobRequest;
      const view = request?.view;
      // Always present with autoAllocateChunkSize; a fresh buffer otherwise.
      const target = view ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength) : new Uint8Array(READ_CHUNK);
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
}

/**
 * `mkdir -p`: resolves to the first directory created, like `fsp.mkdir(dir, {
 * recursive: true })`, which it tries first. That call reports ENOENT when a
 * directory below the first one it creates fails (seen with ENOSPC when the
 * filesystem runs out of inodes: Node 20), so a full disk would pass for a
 * missing object; on ENOENT the directories are made one by one, which fails
 * with the real errno.
 */
async function mkdirs(dir: string): Promise<string | undefined> {
  try {
    return await fsp.mkdir(dir, { recursive: true });
  } catch (error) {
    if (errno(error) !== "ENOENT") throw error;
  }
  const missing: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    if (await fsp.lstat(d).then(() => true, () => false)) break;
    missing.unshift(d);
    if (d === path.dirname(d)) break;
  }
  let first: string | undefined;
  for (const d of missing) {
    try {
      await fsp.mkdir(d);
      first ??= d;
    } catch (error) {
      if (errno(error) !== "EEXIST") throw error;
    }
  }
  return first;
}

/** fsync a file's data (a no-op cost when nothing is dirty). ENOENT surfaces as "not_found". */
/** fsync `file` (fdatasync with `dataOnly`: the bytes, not the metadata). */
async function syncFile(file: string, dataOnly = false): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fsp.open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    await (dataOnly ? handle.datasync() : handle.sync());
  } catch (error) {
    throw toStorageError(error, "cannot store");
  } finally {
    await handle?.close().catch(() => {});
  }
}

async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fsp.open(dir, "r");
    await handle.sync();
  } catch (error) {
    // Some filesystems refuse fsync on directories (EINVAL, EISDIR on a few platforms).
    const code = errno(error);
    if (code !== "EINVAL" && code !== "EISDIR" && code !== "EPERM" && code !== "EBADF") throw error;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** Truncate `file` by path, not following a symlink (as every open of the driver). */
async function truncateFile(file: string, size: number): Promise<void> {
  const handle = await fsp.open(file, constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    await handle.truncate(size);
  } finally {
    await handle.close().catch(() => {});
  }
}

async function isFile(file: string): Promise<boolean> {
  return fsp.lstat(file).then((info) => info.isFile(), () => false);
}

async function removeIfEmpty(file: string): Promise<void> {
  try {
    const info = await fsp.lstat(file);
    if (info.isFile() && info.size === 0) await fsp.unlink(file);
  } catch {
    // best effort
  }
}

async function removeStaleTemps(tmpDir: string, maxAgeMs: number): Promise<void> {
  const cutoff = Date.now() - maxAgeMs;
  for (const name of await fsp.readdir(tmpDir)) {
    const file = path.join(tmpDir, name);
    const info = await fsp.lstat(file).catch(() => undefined);
    if (info && info.mtimeMs < cutoff) await fsp.rm(file, { force: true, recursive: true }).catch(() => {});
  }
}

function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** ENOENT, or ENOTDIR: a parent of the path is a file, so the path names no object. */
function isMissing(error: unknown): boolean {
  const code = errno(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Map a Node error to the contract's codes; a `StorageError` passes through unchanged. */
function toStorageError(error: unknown, what: string): StorageError {
  if (error instanceof StorageError) return error;
  switch (errno(error)) {
    case "ENOENT":
      return new StorageError("not_found", `${what} the object: not found`, { cause: error });
    case "ENOTDIR":
    case "EISDIR":
    case "EEXIST":
    case "ENOTEMPTY":
      // A key that is both an object and a prefix of other objects: a file cannot be a directory.
      return new StorageError("conflict", `${what} the object: a key cannot be both an object and a prefix`, { cause: error });
    default:
      if (isNoSpace(error)) return noSpaceError(`${what} the object`, error);
      return new StorageError("io", `${what} the object`, { cause: error });
  }
}
