/**
 * `list`: the keys under a prefix in lexical order, read from the directory
 * tree without reading the subtrees a page does not need.
 *
 * @module
 */
import path from "node:path";
import type { ListOptions, ListPage } from "../driver.js";
import type { FsContext } from "./context.js";
import { startIndex, type DirectoryListings } from "./dir-listings.js";
import { isMissing, toStorageError } from "./errors.js";
import { pathOf } from "./paths.js";

/** The driver's `list`: one page of the keys under `prefix`, after `options.after`. */
export async function listObjects(ctx: FsContext, prefix: string, options?: ListOptions): Promise<ListPage> {
  const dir = pathOf(ctx, prefix);
  await ctx.settled;
  const limit = options?.limit ?? Infinity;
  const keys: string[] = [];
  for await (const key of walk(ctx.listings, dir, prefix + "/", options?.after)) {
    if (keys.length >= limit) return { keys, truncated: true };
    keys.push(key);
  }
  return { keys, truncated: false };
}

/**
 * Yield the keys of the files under `dir` in lexical order of the full key,
 * only those greater than `after`. Subtrees that hold only smaller keys are not
 * read, and a page starts by binary search (dir-listings.ts).
 */
async function* walk(listings: DirectoryListings, dir: string, keyPrefix: string, after: string | undefined): AsyncGenerator<string> {
  let items;
  try {
    items = await listings.items(dir);
  } catch (error) {
    if (isMissing(error)) return;
    throw toStorageError(error, "cannot list");
  }
  if (!items) return;
  for (let i = startIndex(items, keyPrefix, after); i < items.length; i++) {
    const item = items[i]!;
    const key = keyPrefix + item.sortKey;
    if (item.dir) {
      // Every key below starts with `key`; if `after` is past all of them, skip the subtree.
      if (after !== undefined && after > key && !after.startsWith(key)) continue;
      yield* walk(listings, path.join(dir, item.name), key, after);
    } else if (after === undefined || key > after) {
      yield key;
    }
  }
}
