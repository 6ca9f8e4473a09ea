/**
 * The "ranges" section of the storage contract: byte ranges at every edge, across
 * chunk boundaries, and invalid ones.
 *
 * @module
 */
import { beforeEach, describe, expect, it } from "vitest";
import { type ByteRange } from "../../storage/driver.js";
import { bytesEqual, expectCode } from "./assertions.js";
import type { StorageContractContext } from "./context.js";
import { MiB, randomBytes } from "./streams-fixtures.js";

/** Declare the "ranges" tests. */
export function rangeTests(ctx: StorageContractContext): void {
  const { read, readText, put } = ctx;
  describe("ranges", () => {
    const content = "0123456789";
    beforeEach(async () => {
      await put("range/key", content);
    });

    it.each<[string, ByteRange, string]>([
      ["from an offset to the end", { offset: 4 }, "456789"],
      ["from the start", { offset: 0, length: 3 }, "012"],
      ["in the middle", { offset: 3, length: 4 }, "3456"],
      ["up to the last byte", { offset: 7, length: 3 }, "789"],
      ["running past the end", { offset: 7, length: 100 }, "789"],
      ["starting at the end", { offset: 10 }, ""],
      ["starting past the end", { offset: 50, length: 5 }, ""],
      ["of zero length", { offset: 2, length: 0 }, ""],
      ["of zero length at 0", { offset: 0, length: 0 }, ""],
    ])("reads a range %s", async (_, range, expected) => {
      expect(await readText("range/key", range)).toBe(expected);
    });

    it("reads ranges of a large object across chunk boundaries", async () => {
      const data = randomBytes(3 * MiB + 12345);
      await ctx.store.write("range/large", data);
      for (const [offset, length] of [[0, 1], [MiB - 1, 2], [MiB + 5, 2 * MiB], [3 * MiB, 100_000], [12, 3 * MiB]] as const) {
        const got = await read("range/large", { offset, length });
        expect(bytesEqual(got, data.subarray(offset, offset + length))).toBe(true);
      }
    });

    it("rejects a negative or fractional range with invalid_range", async () => {
      await expectCode(ctx.store.read("range/key", { offset: -1 }), "invalid_range");
      await expectCode(ctx.store.read("range/key", { offset: 0, length: -1 }), "invalid_range");
      await expectCode(ctx.store.read("range/key", { offset: 1.5 }), "invalid_range");
      await expectCode(ctx.store.move("range/key", "range/to", { expectedSize: -1 }), "invalid_range");
    });
  });
}
