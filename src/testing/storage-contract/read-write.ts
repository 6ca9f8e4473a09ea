/**
 * The "write and read" section of the storage contract: round trips, overwrites,
 * empty and missing objects, the characters keys allow.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { bytesEqual } from "./assertions.js";
import type { StorageContractContext } from "./context.js";
import { decoder, encoder, randomBytes, streamOfParts } from "./streams-fixtures.js";

/** Declare the "write and read" tests. */
export function writeAndReadTests(ctx: StorageContractContext): void {
  const { read, readText, put } = ctx;
  describe("write and read", () => {
    it("round-trips bytes and reports size", async () => {
      const data = randomBytes(100_000);
      expect(await ctx.store.write("rt/blob", data)).toBe(data.byteLength);
      expect(bytesEqual(await read("rt/blob"), data)).toBe(true);
      const info = await ctx.store.stat("rt/blob");
      expect(info?.size).toBe(data.byteLength);
      expect(info?.modified).toBeInstanceOf(Date);
      expect(Math.abs(info!.modified.getTime() - Date.now())).toBeLessThan(5 * 60_000);
    });

    it("round-trips a stream body of many chunks", async () => {
      const parts = Array.from({ length: 20 }, (_, i) => encoder.encode(`part-${i};`));
      expect(await ctx.store.write("rt/stream", streamOfParts(parts))).toBe(parts.reduce((n, p) => n + p.byteLength, 0));
      expect(await readText("rt/stream")).toBe(parts.map((p) => decoder.decode(p)).join(""));
    });

    it("does not keep a reference to the caller's buffer", async () => {
      const data = encoder.encode("original");
      await ctx.store.write("rt/copy", data);
      data.fill(0);
      expect(await readText("rt/copy")).toBe("original");
    });

    it("overwrites, also with a shorter object (no stale tail)", async () => {
      await put("ow/key", "a much longer first version");
      expect(await put("ow/key", "short")).toBe(5);
      expect(await readText("ow/key")).toBe("short");
      expect((await ctx.store.stat("ow/key"))?.size).toBe(5);
    });

    it("stores empty objects, from bytes and from an empty stream", async () => {
      expect(await ctx.store.write("empty/bytes", new Uint8Array(0))).toBe(0);
      expect(await ctx.store.write("empty/stream", streamOfParts([]))).toBe(0);
      for (const key of ["empty/bytes", "empty/stream"]) {
        expect((await ctx.store.stat(key))?.size).toBe(0);
        expect((await read(key))?.byteLength).toBe(0);
      }
      expect((await ctx.store.list("empty")).keys).toEqual(["empty/bytes", "empty/stream"]);
    });

    it("answers undefined for a missing object", async () => {
      expect(await ctx.store.stat("missing/key")).toBeUndefined();
      expect(await ctx.store.read("missing/key")).toBeUndefined();
      expect(await ctx.store.read("missing/key", { offset: 3, length: 2 })).toBeUndefined();
    });

    it("treats a prefix as no object", async () => {
      await put("pfx/a/b", "x");
      expect(await ctx.store.stat("pfx/a")).toBeUndefined();
      expect(await ctx.store.read("pfx/a")).toBeUndefined();
    });

    it("accepts every character and a 255-character segment that keys allow", async () => {
      const keys = ["chars/AZaz09._@:+=-", "chars/sha256:" + "ab".repeat(32), "chars/" + "s".repeat(255), "chars/.hidden"];
      for (const key of keys) await put(key, key);
      for (const key of keys) expect(await readText(key)).toBe(key);
      expect((await ctx.store.list("chars")).keys).toEqual([...keys].sort());
    });
  });
}
