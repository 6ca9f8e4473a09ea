/**
 * Small file operations of the fs driver. Every open passes `O_NOFOLLOW`: a
 * symlink planted under the root is never followed.
 *
 * @module
 */
import { constants, promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { toStorageError } from "./errors.js";

/** fsync `file` (fdatasync with `dataOnly`: the bytes, not the metadata). ENOENT surfaces as "not_found". */
export async function syncFile(file: string, dataOnly = false): Promise<void> {
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

/** Truncate `file` by path, not following a symlink (as every open of the driver). */
export async function truncateFile(file: string, size: number): Promise<void> {
  const handle = await fsp.open(file, constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    await handle.truncate(size);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Whether `file` is a regular file (not a directory, not a symlink). */
export async function isFile(file: string): Promise<boolean> {
  return fsp.lstat(file).then((info) => info.isFile(), () => false);
}

/** Remove `file` if it is an empty regular file. Best effort. */
export async function removeIfEmpty(file: string): Promise<void> {
  try {
    const info = await fsp.lstat(file);
    if (info.isFile() && info.size === 0) await fsp.unlink(file);
  } catch {
    // best effort
  }
}
