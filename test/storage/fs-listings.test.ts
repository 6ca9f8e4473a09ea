/**
 * The fs driver's directory listings (src/storage/fs/dir-listings.ts): a page
 * starts by binary search, and a cached listing is never served after its
 * directory changed.
 */
import { mkdtemp, rm, utimes, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checked, type StorageDriver } from "../../src/storage/driver.js";
import { DirectoryListings, startIndex, type ListItem } from "../../src/storage/fs/dir-listings.js";
import { fsStorage } from "../../src/storage/fs/index.js";

const item = (sortKey: string): ListItem => ({ name: sortKey.replace(/\/$/, ""), dir: sortKey.endsWith("/"), sortKey });

describe("startIndex", () => {
  it("starts where a full scan would first yield or descend (property)", () => {
    const segment = fc.stringMatching(/^[a-c.+-]{1,3}$/);
    fc.assert(fc.property(fc.uniqueArray(fc.tuple(segment, fc.boolean()), { selector: ([s]) => s, maxLength: 30 }), fc.option(fc.string({ maxLength: 8 }), { nil: undefined }), (entries, afterRel) => {
      const items = entries.map(([s, dir]) => item(dir ? `${s}/` : s)).sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
      const prefix = "p/";
      for (const after of [afterRel === undefined ? undefined : prefix + afterRel, afterRel, "a", "z"]) {
        // The first entry a scan from 0 does not skip.
        const naive = items.findIndex((it) => {
          const key = prefix + it.sortKey;
          if (after === undefined) return true;
          return it.dir ? !(after > key && !after.startsWith(key)) : key > after;
        });
        const expected = naive < 0 ? items.length : naive;
        const got = startIndex(items, prefix, after);
        // Everything between got and expected is skipped by the walk anyway; got must never be past expected.
        expect(got).toBeLessThanOrEqual(expected);
        for (let i = got; i < expected; i++) {
          const key = prefix + items[i]!.sortKey;
          expect(items[i]!.dir ? after! > key && !after!.startsWith(key) : !(key > after!)).toBe(true);
        }
      }
    }));
  });
});

describe("fs list over a large, settled directory", () => {
  let root: string;
  let store: StorageDriver;
  const dir = () => path.join(root, "tags");
  let old: Date;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "rk-fs-listings-"));
    await mkdir(dir());
    await Promise.all(Array.from({ length: 600 }, (_, i) => writeFile(path.join(dir(), `t${String(i).padStart(5, "0")}`), "x")));
    // Settled: last changed long enough ago for its listing to be kept.
    old = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    await utimes(dir(), old, old);
    store = checked(fsStorage({ root, fsync: false }));
  });
  afterEach(async () => {
    await store.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("pages through every key in order, each page after the last", async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.list("tags", after === undefined ? { limit: 100 } : { after, limit: 100 });
      seen.push(...page.keys);
      if (!page.truncated) break;
      after = page.keys.at(-1);
    }
    expect(seen).toHaveLength(600);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(600);
  });

  it("sees a key added or removed after the listing was cached", async () => {
    expect((await store.list("tags", { after: "tags/t00590" })).keys).toEqual(Array.from({ length: 9 }, (_, i) => `tags/t0059${i + 1}`));
    await store.write("tags/t00595x", new TextEncoder().encode("y"));
    await store.delete("tags/t00591");
    expect((await store.list("tags", { after: "tags/t00590" })).keys).toEqual(
      ["tags/t00592", "tags/t00593", "tags/t00594", "tags/t00595", "tags/t00595x", "tags/t00596", "tags/t00597", "tags/t00598", "tags/t00599"],
    );
  });

  it("keeps the listing of a settled directory while it is unchanged, and reads it again after a change", async () => {
    const listings = new DirectoryListings();
    const first = await listings.items(dir());
    expect(first).toHaveLength(600);
    expect(await listings.items(dir())).toBe(first);
    await writeFile(path.join(dir(), "t99999"), "z");
    const second = await listings.items(dir());
    expect(second).not.toBe(first);
    expect(second).toHaveLength(601);
    // Changed a moment ago: not kept (coarse timestamps could hide a change in the same tick).
    expect(await listings.items(dir())).not.toBe(second);
  });

  it("sees a change made by another process even when it keeps the directory's mtime", async () => {
    await store.list("tags", { limit: 1 });
    // Another writer adds a file and then sets the very same mtime back: ctime still moves.
    await writeFile(path.join(dir(), "t99999"), "z");
    await utimes(dir(), old, old);
    expect((await store.list("tags", { after: "tags/t99998" })).keys).toEqual(["tags/t99999"]);
  });
});
