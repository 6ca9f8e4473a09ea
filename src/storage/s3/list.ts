/**
 * Listing: ListObjectsV2 pages, and the driver's `list`, which shows each
 * appended object once (by its first part object) and hides further part
 * objects and writer locks.
 *
 * @module
 */
import { StorageError, type ListOptions, type ListPage, type ObjectInfo } from "../driver.js";
import type { S3Context } from "./context.js";
import { PART_MARK } from "./keys.js";
import { children, childText } from "./xml.js";

/** One entry of a ListObjectsV2 page. */
export interface RawEntry {
  key: string;
  size: number;
  modified: Date;
  /** Without quotes; empty when the server sent none. */
  etag: string;
}

/** One ListObjectsV2 page of bucket keys under `prefix`. */
export async function listPage(
  ctx: S3Context,
  prefix: string,
  opts: { startAfter?: string | undefined; token?: string | undefined; maxKeys?: number },
): Promise<{ entries: RawEntry[]; next?: string | undefined }> {
  const root = await ctx.client.sendXml({
    op: "list",
    method: "GET",
    query: {
      "list-type": 2,
      prefix,
      "max-keys": opts.maxKeys ?? 1000,
      "start-after": opts.token ? undefined : opts.startAfter,
      "continuation-token": opts.token,
    },
  });
  const entries = children(root, "Contents").map((c) => ({
    key: childText(c, "Key") ?? "",
    size: Number(childText(c, "Size") ?? "0"),
    modified: new Date(childText(c, "LastModified") ?? 0),
    etag: (childText(c, "ETag") ?? "").replace(/"/g, ""),
  }));
  const truncated = childText(root, "IsTruncated") === "true";
  const next = childText(root, "NextContinuationToken");
  if (truncated && !next) throw new StorageError("io", "s3 list: truncated answer without a continuation token");
  return { entries, next: truncated ? next : undefined };
}

/** Every bucket key under `prefix` (after `startAfter`), page by page of `maxKeys`. */
export async function* listAll(ctx: S3Context, prefix: string, startAfter?: string, maxKeys?: number): AsyncGenerator<RawEntry> {
  let token: string | undefined;
  do {
    const page = await listPage(ctx, prefix, { startAfter, token, ...(maxKeys ? { maxKeys } : {}) });
    yield* page.entries;
    token = page.next;
  } while (token);
}

/** Keys asked for at a time by `list(…, { limit: 0 })`, which only looks for one visible key. */
const PROBE_KEYS = 16;

/**
 * The driver's `list`: driver keys directly or deeper under `prefix/`, after
 * `after`, at most `limit`. Each page starts with `start-after`, so what a page
 * costs does not depend on how many keys come before it or after it: one
 * ListObjectsV2 (more only where hidden part objects and locks fill it).
 *
 * `truncated`: a page asks for `limit + 1` keys where that fits in one request
 * (up to 1,000), so it knows. A page of 1,000 that fills the store's answer
 * exactly is `truncated` when the store says more follow, without a second
 * request to look at them (on radosgw that request costs as much as the page):
 * in the rare case that only hidden part objects or locks follow, the next page
 * is empty (the contract allows it).
 *
 * With `info`, a plain object's size and time come from the listing (exactly
 * what `stat` would answer); an appended object shown by its first part object
 * gets `undefined` (its size is the sum of its parts: the caller stats it).
 */
export async function list(ctx: S3Context, prefix: string, options?: ListOptions): Promise<ListPage> {
  const { keys: layout } = ctx;
  const limit = options?.limit ?? Infinity;
  const after = options?.after;
  const bucketPrefix = layout.objectKey(prefix) + "/";
  // Skip `after` and its part objects: `!~` sorts after `<after>!<digits>` and before any longer key.
  let startAfter = after !== undefined && layout.objectKey(after) + PART_MARK + "~" > bucketPrefix ? layout.objectKey(after) + PART_MARK + "~" : undefined;
  const keys: string[] = [];
  const info: Array<ObjectInfo | undefined> = [];
  for (;;) {
    const wanted = limit <= 0 ? PROBE_KEYS : Math.min(1000, limit - keys.length + 1);
    const page = await listPage(ctx, bucketPrefix, { startAfter, maxKeys: wanted });
    for (const entry of page.entries) {
      const key = layout.logicalKey(entry.key);
      // Further part objects and writer locks show nothing; a plain object hides its parts (as in `stat`).
      if (key === undefined || (after !== undefined && key <= after) || keys[keys.length - 1] === key) continue;
      if (keys.length >= limit) return finish(keys, info, true, options);
      keys.push(key);
      info.push(entry.key === layout.objectKey(key) ? { size: entry.size, modified: entry.modified } : undefined);
    }
    const last = page.entries[page.entries.length - 1];
    if (page.next === undefined || last === undefined) return finish(keys, info, false, options);
    if (limit > 0 && keys.length >= limit) return finish(keys, info, true, options);
    startAfter = last.key;
  }
}

function finish(keys: string[], info: Array<ObjectInfo | undefined>, truncated: boolean, options?: ListOptions): ListPage {
  return options?.info ? { keys, truncated, info } : { keys, truncated };
}
