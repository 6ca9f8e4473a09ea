/**
 * `list`: the keys under a prefix in lexical order, read from the directory
 * tree without reading the subtrees a page does not need.
 *
 * @module
 */
import { promises as fsp, type Dirent } from "node:fs";
import path from "node:path";
import type { ListOptions, ListPage } from "../driver.js";
import type { FsContext } from "./context.js";
import { isMissing, toStorageError } from "./errors.js";
import { pathOf } from "./paths.js";

/** A directory entry name that can be a key segment (see `assertValidKey`). */
const SEGMENT = /^[A-Za-z0-9._@:+=-]+$/;

/** The driver's `list`: one page of the keys under `prefix`, after `options.after`. */
export async function listObjects(ctx: FsContext, prefix: string, options?: ListOptions): Promise<ListPage> {
  const dir = pathOf(ctx, prefix);
  await ctx.ready;
  const limit = options?.limit ?? Infinity;
  const keys: string[] = [];
  for await (const key of walk(dir, prefix + "/", options?.after)) {
    if (keys.length >= limit) return { keys, truncated: true };
    keys.push(key);
  }
  return { keys, truncated: false };
}

/**
 * Yield the keys of the files under `dir` in lexical order of the full key,
 * only those greater than `after`. Subtrees that hold only smaller keys are not
 * read.
 */
async function* walk(dir: string, keyPrefix: string, after: string | undefined): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return;
    throw toStorageError(error, "cannot list");
  }
  // Sort by what each entry contributes to the full key: a directory `d` stands for
  // keys starting `d/`, and "/" sorts after "-", "." and "+" (so `a-b` < `a/x`).
  const items = entries
    .filter((entry) => SEGMENT.test(entry.name) && (entry.isFile() || entry.isDirectory()))
    .map((entry) => ({ name: entry.name, dir: entry.isDirectory(), sortKey: entry.isDirectory() ? entry.name + "/" : entry.name }))
    .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  for (const item of items) {
    const key = keyPrefix + item.sortKey;
    if (item.dir) {
      // Every key below starts with `key`; if `after` is past all of them, skip the subtree.
      if (after !== undefined && after > key && !after.startsWith(key)) continue;
      yield* walk(path.join(dir, item.name), key, after);
    } else if (after === undefined || key > after) {
      yield key;
    }
  }
}
