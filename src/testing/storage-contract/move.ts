/**
 * The "move" section of the storage contract: renames, missing sources, prefixes.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { expectCode } from "./assertions.js";
import type { StorageContractContext } from "./context.js";

/** Declare the "move" tests. */
export function moveTests(ctx: StorageContractContext): void {
  const { readText, put } = ctx;
  describe("move", () => {
    it("renames, replacing the target", async () => {
      await put("mv/a", "new");
      await put("mv/b", "old target that is longer");
      await ctx.store.move("mv/a", "mv/b");
      expect(await readText("mv/b")).toBe("new");
      expect(await ctx.store.stat("mv/a")).toBeUndefined();
      expect((await ctx.store.list("mv")).keys).toEqual(["mv/b"]);
    });

    it("creates the target's prefixes", async () => {
      await put("mv/src", "x");
      await ctx.store.move("mv/src", "mv/deep/er/target");
      expect(await readText("mv/deep/er/target")).toBe("x");
    });

    it("throws not_found for a missing source and leaves the target", async () => {
      await put("mv/t", "keep");
      await expectCode(ctx.store.move("mv/none", "mv/t"), "not_found");
      await expectCode(ctx.store.move("mv/none", "mv/new"), "not_found");
      expect(await readText("mv/t")).toBe("keep");
      expect(await ctx.store.stat("mv/new")).toBeUndefined();
    });

    it("throws not_found when the source is only a prefix", async () => {
      await put("mv/dir/child", "x");
      await expectCode(ctx.store.move("mv/dir", "mv/other"), "not_found");
      expect(await readText("mv/dir/child")).toBe("x");
    });

    it("moving onto itself keeps the object", async () => {
      await put("mv/self", "same");
      await ctx.store.move("mv/self", "mv/self");
      expect(await readText("mv/self")).toBe("same");
    });
  });
}
