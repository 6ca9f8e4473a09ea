/**
 * The directories of the fs driver: making a key's parents, renaming a
 * finished file into place, pruning the directories a delete leaves empty,
 * and fsyncing directory entries.
 *
 * @module
 */
import { promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import type { FsContext } from "./context.js";
import { errno, toStorageError } from "./errors.js";
import { isFile } from "./files.js";

/** How often to retry when a concurrent delete removes a directory we are writing into. */
export const RETRIES = 5;

/**
 * Create the parent directories of `file`, fsyncing the directories that gained an entry. Retries when a
 * concurrent delete prunes a directory just made, before its child was (mkdir then fails with ENOENT).
 */
export async function makeParents(ctx: FsContext, file: string): Promise<void> {
  const dir = path.dirname(file);
  let first: string | undefined;
  let attempt = 0;
  for (; ; attempt++) {
    try {
      first = await mkdirs(dir);
      break;
    } catch (error) {
      if (attempt < RETRIES && errno(error) === "ENOENT") continue;
      throw toStorageError(error, "cannot create the directories of");
    }
  }
  if ((first || attempt > 0) && ctx.sync) {
    // `dir` gets its entry at the rename (synced there); each directory from the parent of the first one created
    // down to `dir`'s parent gained a new subdirectory. What a failed attempt made is not known: all up to the root.
    const top = attempt > 0 ? ctx.root : path.dirname(first!);
    for (let d = path.dirname(dir); ; d = path.dirname(d)) {
      await syncDir(d);
      if (d === top || d === ctx.root || d === path.dirname(d)) break;
    }
  }
}

/**
 * Rename `from` onto `to`, creating `to`'s directories. Retries when a
 * concurrent delete removes an empty directory on the way, and replaces an
 * empty directory left at `to` by deleted children.
 */
export async function renameInto(ctx: FsContext, from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await makeParents(ctx, to);
    try {
      await fsp.rename(from, to);
      if (ctx.sync) await syncDir(path.dirname(to));
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
export async function pruneEmptyDirs(ctx: FsContext, dir: string): Promise<void> {
  for (let d = dir; d.startsWith(ctx.inside) && d !== ctx.tmpDir; d = path.dirname(d)) {
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

/** fsync a directory, so that the entries it gained or lost survive a power loss. */
export async function syncDir(dir: string): Promise<void> {
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

/** Remove the entries of `tmpDir` not modified for `maxAgeMs` (left over by a crash). */
export async function removeStaleTemps(tmpDir: string, maxAgeMs: number): Promise<void> {
  const cutoff = Date.now() - maxAgeMs;
  for (const name of await fsp.readdir(tmpDir)) {
    const file = path.join(tmpDir, name);
    const info = await fsp.lstat(file).catch(() => undefined);
    if (info && info.mtimeMs < cutoff) await fsp.rm(file, { force: true, recursive: true }).catch(() => {});
  }
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
