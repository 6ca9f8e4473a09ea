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
 * This file composes the driver; each method lives in its own module over an
 * explicit `FsContext` (context.ts): read.ts (`stat`, `read`), write.ts
 * (`write` and the batched body copy), append.ts (`append` under the writer
 * lock), writeback.ts (early fdatasync of appended bytes), move.ts, delete.ts,
 * walk.ts (`list`), over paths.ts, dirs.ts, files.ts and errors.ts.
 *
 * @module
 */
import { promises as fsp } from "node:fs";
import type { StorageDriver } from "../driver.js";
import { appendObject } from "./append.js";
import type { FsContext } from "./context.js";
import { deleteObject, deletePrefix } from "./delete.js";
import { DirectoryListings } from "./dir-listings.js";
import { removeStaleTemps } from "./dirs.js";
import { toStorageError } from "./errors.js";
import { moveObject } from "./move.js";
import { fsPaths } from "./paths.js";
import { readObject, statObject } from "./read.js";
import { listObjects } from "./walk.js";
import { writeObject } from "./write.js";
import { removeStaleHolders } from "./writer-lock.js";
import { AppendWriteback } from "./writeback.js";

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
  /**
   * Run the `lstat` behind `stat` on the event loop (`true`, the default): on a
   * local disk it costs ~2 µs, a round trip through libuv's thread pool 20-40
   * µs of CPU, and a manifest GET makes two stats. Set `false` where a stat
   * can wait (a network file system, a cold cache on a slow disk): the loop
   * then goes on serving while it does.
   */
  statOnEventLoop?: boolean;
}

/** Errors of the root's mkdir that deny writing only: reads go on (see `settled` in {@link FsContext}). */
const WRITE_DENIED = new Set(["EACCES", "EPERM", "EROFS"]);

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
  const paths = fsPaths(options.root);
  const sync = options.fsync ?? true;
  const staleTempMs = options.staleTempMs ?? 24 * 60 * 60 * 1000;

  // Created once; every method that writes waits for it. The sweep of stale temp and holder files runs beside it.
  const made = fsp.mkdir(paths.tmpDir, { recursive: true });
  const ready = made.then(
    () => undefined,
    (error: unknown) => {
      throw toStorageError(error, "cannot create the root for");
    },
  );
  // Reads wait only for the attempt when writing is all that is denied: a root this process may
  // not write (run unprivileged, a read-only mount) is still served, as by Distribution.
  const settled = made.then(
    () => undefined,
    (error: unknown) => {
      if (!WRITE_DENIED.has((error as NodeJS.ErrnoException).code ?? "")) throw toStorageError(error, "cannot create the root for");
    },
  );
  const sweep = ready.then(() => Promise.all([removeStaleTemps(paths.tmpDir, staleTempMs), removeStaleHolders(paths.writersDir, staleTempMs)])).catch(() => {});
  // A failed mkdir surfaces on the first call, not as an unhandled rejection.
  ready.catch(() => {});
  settled.catch(() => {});

  const ctx: FsContext = {
    ...paths,
    sync,
    staleLockMs: options.staleLockMs ?? 10 * 60 * 1000,
    ready,
    settled,
    writeback: new AppendWriteback(sync),
    statsInFlight: new Map(),
    statOnEventLoop: options.statOnEventLoop ?? true,
    listings: new DirectoryListings(),
  };

  return {
    name: "fs",
    stat: (key) => statObject(ctx, key),
    read: (key, range) => readObject(ctx, key, range),
    write: (key, body, options) => writeObject(ctx, key, body, options),
    append: (key, body, options) => appendObject(ctx, key, body, options),
    move: (from, to, options) => moveObject(ctx, from, to, options),
    delete: (key) => deleteObject(ctx, key),
    deletePrefix: (prefix) => deletePrefix(ctx, prefix),
    list: (prefix, options) => listObjects(ctx, prefix, options),
    async close(): Promise<void> {
      await sweep;
    },
  };
}
