/**
 * Listing: every bucket object under a prefix (paged by cursor), and the
 * driver's `list`, which shows a key once for its whole object or its first
 * part object and hides further parts and writer locks.
 *
 * @module
 */
import type { ListOptions, ListPage } from "../driver.js";
import type { R2ObjectInfo } from "./bucket.js";
import { call, objectKey, shownKey, type R2Context } from "./context.js";

/** R2 answers at most 1000 objects a page. */
const PAGE = 1000;

/** Every object whose bucket key starts with `prefix` and sorts after `startAfter`, in key order. */
export async function* listRaw(ctx: R2Context, prefix: string, startAfter?: string, pageSize = PAGE): AsyncGenerator<R2ObjectInfo> {
  let cursor: string | undefined;
  do {
    const page = await call("list", () =>
      ctx.bucket.list({ prefix, limit: pageSize, ...(cursor ? { cursor } : startAfter ? { startAfter } : {}) }),
    );
    yield* page.objects;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}

/** The driver's `list`: the keys under `prefix/`, after `after`, at most `limit`. */
export async function list(ctx: R2Context, prefix: string, options?: ListOptions): Promise<ListPage> {
  const limit = options?.limit ?? Infinity;
  const after = options?.after;
  const keys: string[] = [];
  const raw = listRaw(ctx, objectKey(ctx, prefix + "/"), after === undefined ? undefined : objectKey(ctx, after), Math.min(PAGE, limit + 1));
  try {
    for await (const object of raw) {
      const key = shownKey(ctx, object.key);
      // A part object of `after` itself lists after it; a key shows once (whole object and first part).
      if (key === undefined || (after !== undefined && key <= after) || key === keys.at(-1)) continue;
      if (keys.length === limit) return { keys, truncated: true };
      keys.push(key);
    }
  } finally {
    await raw.return(undefined);
  }
  return { keys, truncated: false };
}
