/**
 * Listing: ListObjectsV2 pages, and the driver's `list`, which shows each
 * appended object once (by its first part object) and hides further part
 * objects and writer locks.
 *
 * @module
 */
import { StorageError, type ListOptions, type ListPage } from "../driver.js";
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

/** The driver's `list`: driver keys directly or deeper under `prefix/`, after `after`, at most `limit`. */
export async function list(ctx: S3Context, prefix: string, options?: ListOptions): Promise<ListPage> {
  const { keys: layout } = ctx;
  const limit = options?.limit ?? Infinity;
  const after = options?.after;
  const bucketPrefix = layout.objectKey(prefix) + "/";
  // Skip `after` and its part objects: `!~` sorts after `<after>!<digits>` and before any longer key.
  const startAfter = after !== undefined && layout.objectKey(after) + PART_MARK + "~" > bucketPrefix ? layout.objectKey(after) + PART_MARK + "~" : undefined;
  const keys: string[] = [];
  if (limit <= 0) {
    for await (const entry of listAll(ctx, bucketPrefix, startAfter, 100)) {
      const key = layout.logicalKey(entry.key);
      if (key !== undefined && (after === undefined || key > after)) return { keys, truncated: true };
    }
    return { keys, truncated: false };
  }
  for await (const entry of listAll(ctx, bucketPrefix, startAfter, Number.isFinite(limit) ? Math.min(1000, limit + 1) : 1000)) {
    const key = layout.logicalKey(entry.key);
    if (key === undefined || (after !== undefined && key <= after)) continue;
    if (keys[keys.length - 1] === key) continue;
    if (keys.length >= limit) return { keys, truncated: true };
    keys.push(key);
  }
  return { keys, truncated: false };
}
