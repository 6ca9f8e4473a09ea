/**
 * How the fs driver reads Node's errors: the errno, "this path names no
 * object", and the mapping to the contract's `StorageError` codes.
 *
 * @module
 */
import { StorageError } from "../driver.js";
import { isNoSpace, noSpaceError } from "./no-space.js";

/** The `code` of a Node error (`"ENOENT"`, ...), if it has one. */
export function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** ENOENT, or ENOTDIR: a parent of the path is a file, so the path names no object. */
export function isMissing(error: unknown): boolean {
  const code = errno(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Map a Node error to the contract's codes; a `StorageError` passes through unchanged. */
export function toStorageError(error: unknown, what: string): StorageError {
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
