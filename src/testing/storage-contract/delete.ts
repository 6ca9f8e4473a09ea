/**
 * The "delete" and "deletePrefix" sections of the storage contract.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import type { StorageContractContext } from "./context.js";

/** Declare the "delete" and "deletePrefix" tests. */
export function deleteTests(ctx: StorageContractContext): void {
  const { readText, put } = ctx;
  describe("delete", () => {
    it("deletes and is idempotent", async () => {
      await put("del/a", "x");
      await ctx.store.delete("del/a");
      expect(await ctx.store.stat("del/a")).toBeUndefined();
      await ctx.store.delete("del/a");
      await ctx.store.delete("del/never/existed");
    });

    it("does not delete what is under a key that is only a prefix", async () => {
      await put("del/p/child", "x");
      await ctx.store.delete("del/p");
      expect(await readText("del/p/child")).toBe("x");
    });

    it("lets a key be written again after its siblings and parents were emptied", async () => {
      await put("del/tree/a/b", "1");
      await ctx.store.delete("del/tree/a/b");
      expect((await ctx.store.list("del")).keys).toEqual([]);
      await put("del/tree/a", "2");
      expect(await readText("del/tree/a")).toBe("2");
    });
  });

  describe("deletePrefix", () => {
    it("removes everything under the prefix and nothing else", async () => {
      const keep = ["foo-bar/x", "foob/x", "fo/x", "foo.x/y", "other/foo/x"];
      const gone = ["foo/a", "foo/b/c", "foo/b/d/e"];
      for (const key of [...keep, ...gone]) await put(key, key);
      await ctx.store.deletePrefix("foo");
      for (const key of gone) expect(await ctx.store.stat(key)).toBeUndefined();
      for (const key of keep) expect(await readText(key)).toBe(key);
      expect((await ctx.store.list("foo")).keys).toEqual([]);
      await put("foo/again", "y");
      expect((await ctx.store.list("foo")).keys).toEqual(["foo/again"]);
    });

    it("does not remove an object named like the prefix", async () => {
      await put("solo", "me");
      await ctx.store.deletePrefix("solo");
      expect(await readText("solo")).toBe("me");
    });

    it("removes a nested prefix only", async () => {
      await put("np/a/x", "1");
      await put("np/ab/x", "2");
      await put("np/a/b/y", "3");
      await ctx.store.deletePrefix("np/a");
      expect((await ctx.store.list("np")).keys).toEqual(["np/ab/x"]);
    });

    it("is fine on a missing prefix", async () => {
      await ctx.store.deletePrefix("nothing/here");
    });
  });
}
