/**
 * The "append" section of the storage contract: growing an object, `expectedSize`
 * checks, racing and failing appends.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { codeOf, expectCode } from "./assertions.js";
import type { StorageContractContext } from "./context.js";
import { encoder, failingStream, slowStream, streamOfParts } from "./streams-fixtures.js";

/** Declare the "append" tests. */
export function appendTests(ctx: StorageContractContext): void {
  const { readText } = ctx;
  describe("append", () => {
    it("creates the object and grows it; readable between appends", async () => {
      expect(await ctx.store.append("up/data", encoder.encode("abc"))).toBe(3);
      expect(await readText("up/data")).toBe("abc");
      expect(await ctx.store.append("up/data", streamOfParts([encoder.encode("de"), encoder.encode("f")]))).toBe(6);
      expect(await readText("up/data")).toBe("abcdef");
      expect(await ctx.store.append("up/data", new Uint8Array(0), { expectedSize: 6 })).toBe(6);
      expect(await ctx.store.append("up/data", encoder.encode("g"), { expectedSize: 6 })).toBe(7);
      expect(await readText("up/data")).toBe("abcdefg");
      expect((await ctx.store.stat("up/data"))?.size).toBe(7);
    });

    it("accepts expectedSize 0 for a missing object", async () => {
      expect(await ctx.store.append("up/new", encoder.encode("xy"), { expectedSize: 0 })).toBe(2);
      expect(await readText("up/new")).toBe("xy");
    });

    it("throws conflict on a size mismatch and writes nothing", async () => {
      await ctx.store.append("up/c", encoder.encode("12345"));
      await expectCode(ctx.store.append("up/c", encoder.encode("zz"), { expectedSize: 4 }), "conflict");
      await expectCode(ctx.store.append("up/c", streamOfParts([encoder.encode("zz")]), { expectedSize: 6 }), "conflict");
      expect(await readText("up/c")).toBe("12345");
      await expectCode(ctx.store.append("up/none", encoder.encode("zz"), { expectedSize: 3 }), "conflict");
      expect(await ctx.store.stat("up/none")).toBeUndefined();
      expect((await ctx.store.list("up")).keys).toEqual(["up/c"]);
    });

    it("lets exactly one of several appends with the same expectedSize win", async () => {
      await ctx.store.append("up/race", encoder.encode("base"));
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          ctx.store.append("up/race", slowStream([encoder.encode(`<${i}`), encoder.encode(`>`)]), { expectedSize: 4 })),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(codeOf(r.reason)).toBe("conflict");
      expect(await readText("up/race")).toMatch(/^base<\d>$/);
    });

    it("a failed append leaves an object that can be appended to at its stat size", async () => {
      await ctx.store.append("up/f", encoder.encode("ok"));
      const failure = new Error("client went away");
      await expect(ctx.store.append("up/f", failingStream([encoder.encode("partial")], failure))).rejects.toSatisfy(
        (e: unknown) => e === failure || (e as { cause?: unknown }).cause === failure,
      );
      const size = (await ctx.store.stat("up/f"))!.size;
      expect(await ctx.store.append("up/f", encoder.encode("!"), { expectedSize: size })).toBe(size + 1);
      expect(await readText("up/f")).toMatch(/^ok(partial)?!$/);
    });

    it("an append then move publishes the assembled object", async () => {
      await ctx.store.append("uploads/u1/data", encoder.encode("hello "));
      await ctx.store.append("uploads/u1/data", encoder.encode("world"), { expectedSize: 6 });
      await ctx.store.move("uploads/u1/data", "blobs/sha256/ab/abcd/data");
      expect(await readText("blobs/sha256/ab/abcd/data")).toBe("hello world");
      expect(await ctx.store.stat("uploads/u1/data")).toBeUndefined();
      expect((await ctx.store.list("uploads")).keys).toEqual([]);
    });
  });
}
