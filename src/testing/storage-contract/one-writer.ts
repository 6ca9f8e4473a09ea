/**
 * The "one writer, a final move" section of the storage contract: the upload
 * rule of `StorageDriver` (one appender per key, published by a move).
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { codeOf, expectCode } from "./assertions.js";
import type { StorageContractContext } from "./context.js";
import { encoder, heldStream } from "./streams-fixtures.js";

/** Declare the "one writer, a final move" tests. */
export function oneWriterTests(ctx: StorageContractContext): void {
  describe("one writer, a final move", () => {
    finalMoveTests(ctx);
    singleWriterTests(ctx);
  });
}

/** A move publishes what is there when it takes effect; appends cannot reach the moved object. */
function finalMoveTests(ctx: StorageContractContext): void {
  const { readText } = ctx;
  it("a move racing an append's held body publishes exactly the bytes present when it took effect", async () => {
    await ctx.store.append("ow/data", encoder.encode("first"));
    const held = heldStream(encoder.encode("late"), encoder.encode("-bytes"));
    const appending = ctx.store.append("ow/data", held.stream, { expectedSize: 5, create: false }).then(
      (size) => ({ size }),
      (error: unknown) => ({ error }),
    );
    await held.started;
    const moved = await ctx.store.move("ow/data", "ow/blob", { expectedSize: 5 }).then(
      () => true,
      (error: unknown) => (expect(codeOf(error)).toBe("conflict"), false),
    );
    held.release();
    const appended = await appending;
    if (moved) {
      // The move took effect first: the append must not land anywhere.
      expect(codeOf((appended as { error?: unknown }).error)).toBe("conflict");
      expect(await ctx.store.stat("ow/data")).toBeUndefined();
    } else {
      // The move was refused while the append ran: the append completes, nothing moved.
      expect(appended).toEqual({ size: 15 });
      expect(await readText("ow/data")).toBe("firstlate-bytes");
      expect(await ctx.store.stat("ow/blob")).toBeUndefined();
    }
    // Whatever the order, what was published is exactly what was there, and stays so.
    await new Promise((r) => setTimeout(r, 20));
    if (moved) expect(await readText("ow/blob")).toBe("first");
  });

  it("an append after a move writes nothing into the moved object", async () => {
    await ctx.store.append("ow/a", encoder.encode("abc"));
    await ctx.store.move("ow/a", "ow/b", { expectedSize: 3 });
    await expectCode(ctx.store.append("ow/a", encoder.encode("zz"), { expectedSize: 3, create: false }), "conflict");
    await expectCode(ctx.store.append("ow/a", encoder.encode("zz"), { expectedSize: 3 }), "conflict");
    expect(await readText("ow/b")).toBe("abc");
    expect(await ctx.store.stat("ow/a")).toBeUndefined();
    expect((await ctx.store.list("ow")).keys).toEqual(["ow/b"]);
  });

  it("move with an expectedSize the object does not have: conflict, nothing moved", async () => {
    await ctx.store.append("ow/s", encoder.encode("12345"));
    await expectCode(ctx.store.move("ow/s", "ow/t", { expectedSize: 4 }), "conflict");
    await expectCode(ctx.store.move("ow/s", "ow/t", { expectedSize: 6 }), "conflict");
    expect(await readText("ow/s")).toBe("12345");
    expect(await ctx.store.stat("ow/t")).toBeUndefined();
    await ctx.store.move("ow/s", "ow/t", { expectedSize: 5 });
    expect(await readText("ow/t")).toBe("12345");
  });
}

/** At most one append at a time, and none that revives a missing or deleted object. */
function singleWriterTests(ctx: StorageContractContext): void {
  const { readText } = ctx;
  it("append with create: false refuses a missing object and creates nothing", async () => {
    await expectCode(ctx.store.append("ow/none/data", encoder.encode("x"), { create: false }), "conflict");
    await expectCode(ctx.store.append("ow/none/data", encoder.encode("x"), { expectedSize: 0, create: false }), "conflict");
    expect(await ctx.store.stat("ow/none/data")).toBeUndefined();
    expect((await ctx.store.list("ow")).keys).toEqual([]);
    await ctx.store.write("ow/none/data", new Uint8Array(0));
    expect(await ctx.store.append("ow/none/data", encoder.encode("x"), { expectedSize: 0, create: false })).toBe(1);
  });

  it("a second append while one is in progress: refused or queued, never interleaved", async () => {
    await ctx.store.append("ow/two", encoder.encode("0"));
    const held = heldStream(encoder.encode("aa"), encoder.encode("AA"));
    const first = ctx.store.append("ow/two", held.stream, { expectedSize: 1 });
    await held.started;
    const second = ctx.store.append("ow/two", encoder.encode("bb")).then(
      (size) => ({ size }),
      (error: unknown) => ({ code: codeOf(error) }),
    );
    held.release();
    expect(await first).toBe(5);
    const other = await second;
    if ("code" in other) {
      expect(other.code).toBe("conflict");
      expect(await readText("ow/two")).toBe("0aaAA");
    } else {
      expect(await readText("ow/two")).toBe("0aaAAbb");
    }
  });

  it("after a delete during an append, the append cannot bring the object back", async () => {
    await ctx.store.append("ow/del/data", encoder.encode("abc"));
    const held = heldStream(encoder.encode("x"), encoder.encode("y"));
    const appending = ctx.store.append("ow/del/data", held.stream, { expectedSize: 3, create: false }).catch(() => undefined);
    await held.started;
    await ctx.store.deletePrefix("ow/del");
    held.release();
    await appending;
    await expectCode(ctx.store.append("ow/del/data", encoder.encode("z"), { expectedSize: 3, create: false }), "conflict");
    expect(await ctx.store.stat("ow/del/data")).toBeUndefined();
    expect((await ctx.store.list("ow")).keys).toEqual([]);
  });
}
