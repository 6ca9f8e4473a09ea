/**
 * The sorted entries of the large directories `list` pages through, kept
 * while the directory is unchanged. A directory has no ordered seek, so
 * without this every page of `tags/list` or `_catalog` re-reads and re-sorts
 * the whole directory: at 100,000 tags a page cost 135 ms instead of 12 ms at
 * 10,000 (bench/growth.ts). With it a page costs one `stat` of the directory
 * and a binary search.
 *
 * A listing is reused only while the directory's inode, mtime and ctime are
 * the ones it was read under, and it is kept only when the directory had not
 * changed for {@link SETTLED_MS} before it was read: on a filesystem with
 * coarse timestamps (one second on some), a change made in the same tick as
 * the read would otherwise go unseen.
 *
 * @module
 */
import { promises as fsp, type Dirent } from "node:fs";

/** One entry of a directory, as `list` orders it. */
export interface ListItem {
  name: string;
  dir: boolean;
  /** What the entry contributes to a key: `name`, or `name/` for a directory. */
  sortKey: string;
}

/** A directory entry name that can be a key segment (see `assertValidKey`). */
const SEGMENT = /^[A-Za-z0-9._@:+=-]+$/;
/** Directories smaller than this are read every time (cheap, and most are). */
const MIN_CACHED = 512;
/** A directory changed less than this long ago is not cached (coarse timestamps). */
const SETTLED_MS = 2000;

interface Cached {
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  items: ListItem[];
}

/** The listings of one driver, at most `maxEntries` entries in all (least recently used go first). */
export class DirectoryListings {
  readonly #cache = new Map<string, Cached>();
  #entries = 0;

  /** @param maxEntries - the most entries kept over all directories. */
  constructor(readonly maxEntries = 500_000) {}

  /** The sorted entries of `dir`; undefined when it does not exist. Errors other than ENOENT propagate. */
  async items(dir: string): Promise<ListItem[] | undefined> {
    let info;
    try {
      info = await fsp.stat(dir);
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT" || (error as { code?: string }).code === "ENOTDIR") return undefined;
      throw error;
    }
    const hit = this.#cache.get(dir);
    if (hit && hit.ino === info.ino && hit.mtimeMs === info.mtimeMs && hit.ctimeMs === info.ctimeMs) {
      this.#cache.delete(dir); // most recently used last
      this.#cache.set(dir, hit);
      return hit.items;
    }
    if (hit) this.#forget(dir, hit);
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT" || (error as { code?: string }).code === "ENOTDIR") return undefined;
      throw error;
    }
    const items = sortedItems(entries);
    // Settled by mtime: any later change of an entry moves mtime off this old value, whatever the granularity.
    if (items.length >= MIN_CACHED && items.length <= this.maxEntries && Date.now() - info.mtimeMs > SETTLED_MS) {
      this.#cache.set(dir, { ino: info.ino, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs, items });
      this.#entries += items.length;
      for (const [key, old] of this.#cache) {
        if (this.#entries <= this.maxEntries) break;
        this.#forget(key, old);
      }
    }
    return items;
  }

  #forget(dir: string, cached: Cached): void {
    this.#cache.delete(dir);
    this.#entries -= cached.items.length;
  }
}

/**
 * The entries that can be key segments, sorted by what each contributes to
 * the full key: a directory `d` stands for keys starting `d/`, and "/" sorts
 * after "-", "." and "+" (so `a-b` < `a/x`).
 */
function sortedItems(entries: Dirent[]): ListItem[] {
  return entries
    .filter((entry) => SEGMENT.test(entry.name) && (entry.isFile() || entry.isDirectory()))
    .map((entry) => ({ name: entry.name, dir: entry.isDirectory(), sortKey: entry.isDirectory() ? `${entry.name}/` : entry.name }))
    .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
}

/**
 * Where a walk of `items` (the entries under `keyPrefix`) starts for keys
 * greater than `after`: the first entry that can hold one, found by binary
 * search; `items.length` when none can.
 */
export function startIndex(items: readonly ListItem[], keyPrefix: string, after: string | undefined): number {
  if (after === undefined || after < keyPrefix) return 0;
  if (!after.startsWith(keyPrefix)) return items.length;
  const rel = after.slice(keyPrefix.length);
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid]!.sortKey <= rel) lo = mid + 1;
    else hi = mid;
  }
  // The directory that `after` points into sorts before it, and may hold greater keys.
  const previous = items[lo - 1];
  if (previous?.dir && rel.startsWith(previous.sortKey)) return lo - 1;
  return lo;
}
