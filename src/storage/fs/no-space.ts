/**
 * The errnos that mean "the filesystem cannot hold these bytes", shared by the
 * fs driver and its writer lock (which writes a small file too, and so is often
 * the first thing to fail on a full disk).
 *
 * @module
 */
import { StorageError } from "../driver.js";

/**
 * - `ENOSPC`: the filesystem (or its inodes) is full.
 * - `EDQUOT`: the user's or project's disk quota is exhausted: full, as far as
 *   this process can tell, and cured the same way (free space, raise the quota).
 * - `EFBIG`: the file would pass the largest file the filesystem can hold
 *   (4 GiB on FAT32) or the process may write (`RLIMIT_FSIZE`; Node ignores the
 *   `SIGXFSZ` that comes with it). Not "full", but the same outcome for the
 *   client: the server cannot store this object, which is what 507 says
 *   (RFC 4918 §11.5); as `io` it would be an anonymous 500.
 */
const NO_SPACE = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

/** Whether a Node error means the storage cannot hold the bytes. */
export function isNoSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && NO_SPACE.has(code);
}

/** The `no_space` error for `what`; like every message of the driver it names no path (the `cause` keeps it, for logs). */
export function noSpaceError(what: string, cause: unknown): StorageError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new StorageError("no_space", `${what}: no space left on the storage (${String(code)})`, { cause });
}
