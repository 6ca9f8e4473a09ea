/**
 * The "list" section of the storage contract: recursive lexical listing, prefix
 * isolation, paging with `after` and `limit`.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import type { StorageContractContext } from "./context.js";
import { encoder } from "./streams-fixtures.js";

/** Declare the "list" tests. */
export function listTests(ctx: StorageContractContext): void {
  describe("list", () => {
    orderTests(ctx);
    pagingTests(ctx);
  });
}

/** What a listing holds: lexical order of the full key, objects only, prefixes kept apart. */
function orderTests(ctx: StorageContractContext): void {
  const { put } = ctx;
  it("lists recursively in lexical order of the full key, objects only", async () => {
    const keys = ["l/b", "l/a-b", "l/a/b", "l/a/c/d", "l/a.b", "l/a0", "l/a+", "l/B", "l/_", "l/a:", "l/a@", "l/a=", "l/Z/z", "l/a/b-c", "l/a/b.c"];
    for (const key of keys) await put(key, "x");
    await put("l0/outside", "x");
    await put("k/outside", "x");
    expect(await ctx.store.list("l")).toEqual({ keys: [...keys].sort(), truncated: false });
    expect(await ctx.store.list("l/a")).toEqual({ keys: ["l/a/b", "l/a/b-c", "l/a/b.c", "l/a/c/d"], truncated: false });
  });

  it("isolates prefixes that share a beginning", async () => {
    await put("a/b/x", "1");
    await put("a/bc/y", "2");
    await put("a/b-/z", "3");
    expect((await ctx.store.list("a/b")).keys).toEqual(["a/b/x"]);
    expect((await ctx.store.list("a/bc")).keys).toEqual(["a/bc/y"]);
    expect((await ctx.store.list("a")).keys).toEqual(["a/b-/z", "a/b/x", "a/bc/y"]);
  });

  it("answers an empty page for a missing prefix or an object", async () => {
    expect(await ctx.store.list("none")).toEqual({ keys: [], truncated: false });
    await put("obj", "x");
    expect(await ctx.store.list("obj")).toEqual({ keys: [], truncated: false });
  });

}

/** Paging with `after` and `limit`, and what `info` adds. */
function pagingTests(ctx: StorageContractContext): void {
  const { put } = ctx;
  it("pages with after and limit across many keys", async () => {
    const all: string[] = [];
    for (let i = 0; i < 250; i++) {
      // Spread over nested prefixes so that paging crosses directories.
      const key = `many/${String(i % 7)}/${String(i % 3)}/k${String(i).padStart(3, "0")}`;
      all.push(key);
    }
    await Promise.all(all.map((key) => put(key, key)));
    all.sort();

    const pages: { keys: string[]; truncated: boolean }[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await ctx.store.list("many", { limit: 100, ...(after === undefined ? {} : { after }) });
      pages.push(page);
      if (!page.truncated) break;
      after = page.keys[page.keys.length - 1];
      expect(pages.length).toBeLessThan(10);
    }
    expect(pages.map((p) => p.keys.length)).toEqual([100, 100, 50]);
    expect(pages.map((p) => p.truncated)).toEqual([true, true, false]);
    expect(pages.flatMap((p) => p.keys)).toEqual(all);
  });

  it("honours after and limit at their edges", async () => {
    const keys = ["e/a", "e/b/1", "e/b/2", "e/c", "e/d/x/y"];
    for (const key of keys) await put(key, "x");
    expect(await ctx.store.list("e", { limit: 5 })).toEqual({ keys, truncated: false });
    expect(await ctx.store.list("e", { limit: 4 })).toEqual({ keys: keys.slice(0, 4), truncated: true });
    expect(await ctx.store.list("e", { limit: 0 })).toEqual({ keys: [], truncated: true });
    expect((await ctx.store.list("e", { after: "e/b/1" })).keys).toEqual(["e/b/2", "e/c", "e/d/x/y"]);
    // `after` need not be a key: a prefix of keys, or a key that sorts between two.
    expect((await ctx.store.list("e", { after: "e/b" })).keys).toEqual(["e/b/1", "e/b/2", "e/c", "e/d/x/y"]);
    expect((await ctx.store.list("e", { after: "e/b/15" })).keys).toEqual(["e/b/2", "e/c", "e/d/x/y"]);
    expect((await ctx.store.list("e", { after: "e/bz" })).keys).toEqual(["e/c", "e/d/x/y"]);
    expect((await ctx.store.list("e", { after: "a" })).keys).toEqual(keys);
    expect((await ctx.store.list("e", { after: "e/d/x/y" })).keys).toEqual([]);
    expect((await ctx.store.list("e", { after: "z" })).keys).toEqual([]);
    expect(await ctx.store.list("e", { after: "e/c", limit: 1 })).toEqual({ keys: ["e/d/x/y"], truncated: false });
  });

  it("gives with info what stat gives, for each key it gives anything for", async () => {
    await put("i/a", "abc");
    await put("i/b/c", "hello");
    await ctx.store.append("i/d", encoder.encode("12"));
    await ctx.store.append("i/d", encoder.encode("345"), { expectedSize: 2 });
    await put("i/e", "");
    const keys = ["i/a", "i/b/c", "i/d", "i/e"];
    const pages = [await ctx.store.list("i", { info: true }), await ctx.store.list("i", { after: "i/a", limit: 2, info: true })];
    expect(pages.map((p) => [p.keys, p.truncated])).toEqual([[keys, false], [keys.slice(1, 3), true]]);
    for (const page of pages) {
      // Optional: a driver without it leaves `info` out; one with it gives one entry per key.
      if (page.info === undefined) continue;
      expect(page.info).toHaveLength(page.keys.length);
      for (const [i, key] of page.keys.entries()) {
        const listed = page.info[i];
        if (listed === undefined) continue;
        const stat = (await ctx.store.stat(key))!;
        expect({ key, size: listed.size }).toEqual({ key, size: stat.size });
        // HTTP dates (S3 HEAD) carry whole seconds; listings carry milliseconds.
        expect(Math.abs(listed.modified.getTime() - stat.modified.getTime())).toBeLessThan(1000);
      }
    }
    expect((await ctx.store.list("i")).info).toBeUndefined();
  });
}
