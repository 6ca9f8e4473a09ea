/**
 * Where the fs driver keeps things under its root: a key maps to the file
 * `<root>/<key>`, in-flight writes live in `<root>/~tmp/`, the writer lock
 * of an object is `<object>~writer`, a hard link to its holder's file in
 * `<root>/~writers/`. `~` is in no valid key, so none of them ever shows up in
 * a listing.
 *
 * @module
 */
import path from "node:path";
import { StorageError, isValidKey } from "../driver.js";

/** Name of the directory that holds in-flight writes. `~` is not allowed in keys. */
export const TMP_DIR = "~tmp";
/** Suffix of the lock file an append or move holds on its key (see writer-lock.ts). */
export const WRITER_SUFFIX = "~writer";
/** Name of the directory of the processes' holder files, which lock files link to (see writer-lock.ts). */
export const WRITERS_DIR = "~writers";

/** The driver's directories, resolved once. */
export interface FsPaths {
  /** The absolute root. */
  readonly root: string;
  /** What every object path starts with (root "/" already ends with the separator). */
  readonly inside: string;
  /** `<root>/~tmp`: temporary files being written. */
  readonly tmpDir: string;
  /** `<root>/~writers`: one holder file per process that takes writer locks. */
  readonly writersDir: string;
}

/** Resolve the driver's directories for the `root` option. */
export function fsPaths(rootOption: string): FsPaths {
  const root = path.resolve(rootOption);
  const inside = root.endsWith(path.sep) ? root : root + path.sep;
  return { root, inside, tmpDir: path.join(root, TMP_DIR), writersDir: path.join(root, WRITERS_DIR) };
}

/** The path of a key. Keys are validated by `checked` (driver.ts); this is defence in depth. */
export function pathOf(paths: FsPaths, key: string): string {
  // A valid key (no empty, "." or ".." segments) is already a normal relative path:
  // joined as is on POSIX; resolved (and re-checked) elsewhere or when it is not valid.
  if (path.sep === "/" && isValidKey(key)) return `${paths.inside}${key}`;
  const full = path.resolve(paths.root, ...key.split("/"));
  if (!full.startsWith(paths.inside)) throw new StorageError("invalid_key", "storage key escapes the root");
  return full;
}
