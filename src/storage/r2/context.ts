/**
 * What every module of the R2 driver works with: the bucket, the key layout
 * under `rootDirectory`, the part size, and `call`, which turns a failing
 * binding call into a `StorageError("io")`.
 *
 * Bucket keys (`!` sorts below every character a driver key may hold, so a
 * key's own objects list right after it and never inside another key's prefix):
 *
 *     <root>/<key>                      the object, written whole
 *     <root>/<key>!<offset, 16 digits>  a part object of an appended object
 *     <root>/<key>!writer               the writer lock (see lock.ts)
 *
 * @module
 */
import { StorageError } from "../driver.js";
import type { R2BucketLike } from "./bucket.js";

/** Separates a key from the suffix of its part objects and its writer lock. */
export const MARK = "!";
/** Part offsets are zero-padded to this many digits, so that they sort by number. */
const DIGITS = 16;
const FIRST_PART = "0".repeat(DIGITS);

/** The shared state of one `r2Storage` driver. */
export interface R2Context {
  readonly bucket: R2BucketLike;
  /** `"<rootDirectory>/"`, or `""`. */
  readonly root: string;
  /** The size of a multipart part, and of the pieces a body is buffered in. */
  readonly partSize: number;
  /** Parts uploaded at once by one write. */
  readonly concurrency: number;
}

/** The bucket key of the object `key`. */
export function objectKey(ctx: R2Context, key: string): string {
  return ctx.root + key;
}

/** The bucket key of the part object at `offset` of the appended object `key`. */
export function partKey(ctx: R2Context, key: string, offset: number): string {
  return ctx.root + key + MARK + String(offset).padStart(DIGITS, "0");
}

/** The offset a part object's suffix (what follows `!`) stands for; `undefined` for the lock. */
export function partOffset(suffix: string): number | undefined {
  return suffix.length === DIGITS && /^\d+$/.test(suffix) ? Number(suffix) : undefined;
}

/**
 * The driver key a listed bucket key shows: the key of a whole object, or of
 * the first part object of an appended one; nothing for further parts and locks.
 */
export function shownKey(ctx: R2Context, raw: string): string | undefined {
  const k = raw.slice(ctx.root.length);
  const mark = k.indexOf(MARK);
  if (mark === -1) return k;
  return k.slice(mark + 1) === FIRST_PART ? k.slice(0, mark) : undefined;
}

/** Run a binding call; a failure becomes `StorageError("io")` naming the operation, with the binding's error as cause. */
export async function call<T>(op: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new StorageError("io", `r2 ${op} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
