/**
 * The storage driver contract suite: the behaviour every {@link StorageDriver}
 * must show, as a vitest suite. A driver is done when it passes.
 *
 * ```ts
 * // test/storage/my-driver.test.ts
 * import { describeStorageContract } from "registry-kit/testing";
 * describeStorageContract("my driver", async () => ({ driver: myDriver(), cleanup: async () => {} }));
 * ```
 *
 * The suite talks to the driver through `checked(driver)`, as the registry does,
 * so key validation is tested once, in the wrapper, for every method.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageError, checked, type ByteRange, type StorageDriver } from "../storage/driver.js";

/** What a contract `setup` returns: a fresh, empty driver and how to dispose of it. */
export interface StorageContractSubject {
  /** The driver under test, fresh and empty. */
  driver: StorageDriver;
  /** Called after each test (after `driver.close`), e.g. to remove a temp directory or bucket. */
  cleanup?: () => Promise<void>;
}

/** Figures measured by the large-stream tests, for drivers that want to print them. */
export interface LargeStreamStats {
  /** `"write"` or `"read"`. */
  phase: "write" | "read";
  /** Bytes streamed. */
  bytes: number;
  /** How long it took. */
  milliseconds: number;
  /** Bytes per second over the phase. */
  bytesPerSecond: number;
  /** Peak RSS during the phase minus RSS just before it, in bytes. */
  rssGrowth: number;
}

/** Options for {@link describeStorageContract}. */
export interface StorageContractOptions {
  /** Size of the large-stream round trip. Default 256 MiB. */
  largeBytes?: number;
  /**
   * Assert that RSS grows by less than {@link StorageContractOptions.rssLimit}
   * while the large stream is written and read back. Default `true`; turn it off
   * for drivers that keep objects in RAM by design (the memory driver).
   */
  checkMemory?: boolean;
  /** The RSS growth allowed per phase of the large-stream test. Default 64 MiB. */
  rssLimit?: number;
  /** Timeout of the large-stream test, in ms. Default 300 000. */
  largeTimeout?: number;
  /** Called with the figures of the large-stream test (write, then read). */
  onLargeStreamStats?: (stats: LargeStreamStats) => void;
}

const MiB = 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Declare the contract suite for a driver. `setup` runs before every test and
 * must return a fresh, empty driver (a new temp directory, a new bucket prefix).
 */
export function describeStorageContract(
  name: string,
  setup: () => Promise<StorageContractSubject>,
  options: StorageContractOptions = {},
): void {
  const largeBytes = options.largeBytes ?? 256 * MiB;
  const checkMemory = options.checkMemory ?? true;
  const rssLimit = options.rssLimit ?? 64 * MiB;

  describe(`storage contract: ${name}`, () => {
    let subject: StorageContractSubject;
    let store: StorageDriver;

    beforeEach(async () => {
      subject = await setup();
      store = checked(subject.driver);
    });

    afterEach(async () => {
      await subject.driver.close?.();
      await subject.cleanup?.();
    });

    const read = async (key: string, range?: ByteRange): Promise<Uint8Array | undefined> => {
      const stream = await store.read(key, range);
      return stream && collect(stream);
    };
    const readText = async (key: string, range?: ByteRange): Promise<string | undefined> => {
      const data = await read(key, range);
      return data && decoder.decode(data);
    };
    const put = (key: string, text: string): Promise<number> => store.write(key, encoder.encode(text));

    describe("write and read", () => {
      it("round-trips bytes and reports size", async () => {
        const data = randomBytes(100_000);
        expect(await store.write("rt/blob", data)).toBe(data.byteLength);
        expect(bytesEqual(await read("rt/blob"), data)).toBe(true);
        const info = await store.stat("rt/blob");
        expect(info?.size).toBe(data.byteLength);
        expect(info?.modified).toBeInstanceOf(Date);
        expect(Math.abs(info!.modified.getTime() - Date.now())).toBeLessThan(5 * 60_000);
      });

      it("round-trips a stream body of many chunks", async () => {
        const parts = Array.from({ length: 20 }, (_, i) => encoder.encode(`part-${i};`));
        expect(await store.write("rt/stream", streamOfParts(parts))).toBe(parts.reduce((n, p) => n + p.byteLength, 0));
        expect(await readText("rt/stream")).toBe(parts.map((p) => decoder.decode(p)).join(""));
      });

      it("does not keep a reference to the caller's buffer", async () => {
        const data = encoder.encode("original");
        await store.write("rt/copy", data);
        data.fill(0);
        expect(await readText("rt/copy")).toBe("original");
      });

      it("overwrites, also with a shorter object (no stale tail)", async () => {
        await put("ow/key", "a much longer first version");
        expect(await put("ow/key", "short")).toBe(5);
        expect(await readText("ow/key")).toBe("short");
        expect((await store.stat("ow/key"))?.size).toBe(5);
      });

      it("stores empty objects, from bytes and from an empty stream", async () => {
        expect(await store.write("empty/bytes", new Uint8Array(0))).toBe(0);
        expect(await store.write("empty/stream", streamOfParts([]))).toBe(0);
        for (const key of ["empty/bytes", "empty/stream"]) {
          expect((await store.stat(key))?.size).toBe(0);
          expect((await read(key))?.byteLength).toBe(0);
        }
        expect((await store.list("empty")).keys).toEqual(["empty/bytes", "empty/stream"]);
      });

      it("answers undefined for a missing object", async () => {
        expect(await store.stat("missing/key")).toBeUndefined();
        expect(await store.read("missing/key")).toBeUndefined();
        expect(await store.read("missing/key", { offset: 3, length: 2 })).toBeUndefined();
      });

      it("treats a prefix as no object", async () => {
        await put("pfx/a/b", "x");
        expect(await store.stat("pfx/a")).toBeUndefined();
        expect(await store.read("pfx/a")).toBeUndefined();
      });

      it("accepts every character and a 255-character segment that keys allow", async () => {
        const keys = ["chars/AZaz09._@:+=-", "chars/sha256:" + "ab".repeat(32), "chars/" + "s".repeat(255), "chars/.hidden"];
        for (const key of keys) await put(key, key);
        for (const key of keys) expect(await readText(key)).toBe(key);
        expect((await store.list("chars")).keys).toEqual([...keys].sort());
      });
    });

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
        await store.write("range/large", data);
        for (const [offset, length] of [[0, 1], [MiB - 1, 2], [MiB + 5, 2 * MiB], [3 * MiB, 100_000], [12, 3 * MiB]] as const) {
          const got = await read("range/large", { offset, length });
          expect(bytesEqual(got, data.subarray(offset, offset + length))).toBe(true);
        }
      });

      it("rejects a negative or fractional range with invalid_range", async () => {
        await expectCode(store.read("range/key", { offset: -1 }), "invalid_range");
        await expectCode(store.read("range/key", { offset: 0, length: -1 }), "invalid_range");
        await expectCode(store.read("range/key", { offset: 1.5 }), "invalid_range");
        await expectCode(store.move("range/key", "range/to", { expectedSize: -1 }), "invalid_range");
      });
    });

    describe("append", () => {
      it("creates the object and grows it; readable between appends", async () => {
        expect(await store.append("up/data", encoder.encode("abc"))).toBe(3);
        expect(await readText("up/data")).toBe("abc");
        expect(await store.append("up/data", streamOfParts([encoder.encode("de"), encoder.encode("f")]))).toBe(6);
        expect(await readText("up/data")).toBe("abcdef");
        expect(await store.append("up/data", new Uint8Array(0), { expectedSize: 6 })).toBe(6);
        expect(await store.append("up/data", encoder.encode("g"), { expectedSize: 6 })).toBe(7);
        expect(await readText("up/data")).toBe("abcdefg");
        expect((await store.stat("up/data"))?.size).toBe(7);
      });

      it("accepts expectedSize 0 for a missing object", async () => {
        expect(await store.append("up/new", encoder.encode("xy"), { expectedSize: 0 })).toBe(2);
        expect(await readText("up/new")).toBe("xy");
      });

      it("throws conflict on a size mismatch and writes nothing", async () => {
        await store.append("up/c", encoder.encode("12345"));
        await expectCode(store.append("up/c", encoder.encode("zz"), { expectedSize: 4 }), "conflict");
        await expectCode(store.append("up/c", streamOfParts([encoder.encode("zz")]), { expectedSize: 6 }), "conflict");
        expect(await readText("up/c")).toBe("12345");
        await expectCode(store.append("up/none", encoder.encode("zz"), { expectedSize: 3 }), "conflict");
        expect(await store.stat("up/none")).toBeUndefined();
        expect((await store.list("up")).keys).toEqual(["up/c"]);
      });

      it("lets exactly one of several appends with the same expectedSize win", async () => {
        await store.append("up/race", encoder.encode("base"));
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            store.append("up/race", slowStream([encoder.encode(`<${i}`), encoder.encode(`>`)]), { expectedSize: 4 })),
        );
        const won = results.filter((r) => r.status === "fulfilled");
        expect(won).toHaveLength(1);
        for (const r of results) if (r.status === "rejected") expect(codeOf(r.reason)).toBe("conflict");
        expect(await readText("up/race")).toMatch(/^base<\d>$/);
      });

      it("a failed append leaves an object that can be appended to at its stat size", async () => {
        await store.append("up/f", encoder.encode("ok"));
        const failure = new Error("client went away");
        await expect(store.append("up/f", failingStream([encoder.encode("partial")], failure))).rejects.toSatisfy(
          (e: unknown) => e === failure || (e as { cause?: unknown }).cause === failure,
        );
        const size = (await store.stat("up/f"))!.size;
        expect(await store.append("up/f", encoder.encode("!"), { expectedSize: size })).toBe(size + 1);
        expect(await readText("up/f")).toMatch(/^ok(partial)?!$/);
      });

      it("an append then move publishes the assembled object", async () => {
        await store.append("uploads/u1/data", encoder.encode("hello "));
        await store.append("uploads/u1/data", encoder.encode("world"), { expectedSize: 6 });
        await store.move("uploads/u1/data", "blobs/sha256/ab/abcd/data");
        expect(await readText("blobs/sha256/ab/abcd/data")).toBe("hello world");
        expect(await store.stat("uploads/u1/data")).toBeUndefined();
        expect((await store.list("uploads")).keys).toEqual([]);
      });
    });

    describe("one writer, a final move", () => {
      it("a move racing an append's held body publishes exactly the bytes present when it took effect", async () => {
        await store.append("ow/data", encoder.encode("first"));
        const held = heldStream(encoder.encode("late"), encoder.encode("-bytes"));
        const appending = store.append("ow/data", held.stream, { expectedSize: 5, create: false }).then(
          (size) => ({ size }),
          (error: unknown) => ({ error }),
        );
        await held.started;
        const moved = await store.move("ow/data", "ow/blob", { expectedSize: 5 }).then(
          () => true,
          (error: unknown) => (expect(codeOf(error)).toBe("conflict"), false),
        );
        held.release();
        const appended = await appending;
        if (moved) {
          // The move took effect first: the append must not land anywhere.
          expect(codeOf((appended as { error?: unknown }).error)).toBe("conflict");
          expect(await store.stat("ow/data")).toBeUndefined();
        } else {
          // The move was refused while the append ran: the append completes, nothing moved.
          expect(appended).toEqual({ size: 15 });
          expect(await readText("ow/data")).toBe("firstlate-bytes");
          expect(await store.stat("ow/blob")).toBeUndefined();
        }
        // Whatever the order, what was published is exactly what was there, and stays so.
        await new Promise((r) => setTimeout(r, 20));
        if (moved) expect(await readText("ow/blob")).toBe("first");
      });

      it("an append after a move writes nothing into the moved object", async () => {
        await store.append("ow/a", encoder.encode("abc"));
        await store.move("ow/a", "ow/b", { expectedSize: 3 });
        await expectCode(store.append("ow/a", encoder.encode("zz"), { expectedSize: 3, create: false }), "conflict");
        await expectCode(store.append("ow/a", encoder.encode("zz"), { expectedSize: 3 }), "conflict");
        expect(await readText("ow/b")).toBe("abc");
        expect(await store.stat("ow/a")).toBeUndefined();
        expect((await store.list("ow")).keys).toEqual(["ow/b"]);
      });

      it("move with an expectedSize the object does not have: conflict, nothing moved", async () => {
        await store.append("ow/s", encoder.encode("12345"));
        await expectCode(store.move("ow/s", "ow/t", { expectedSize: 4 }), "conflict");
        await expectCode(store.move("ow/s", "ow/t", { expectedSize: 6 }), "conflict");
        expect(await readText("ow/s")).toBe("12345");
        expect(await store.stat("ow/t")).toBeUndefined();
        await store.move("ow/s", "ow/t", { expectedSize: 5 });
        expect(await readText("ow/t")).toBe("12345");
      });

      it("append with create: false refuses a missing object and creates nothing", async () => {
        await expectCode(store.append("ow/none/data", encoder.encode("x"), { create: false }), "conflict");
        await expectCode(store.append("ow/none/data", encoder.encode("x"), { expectedSize: 0, create: false }), "conflict");
        expect(await store.stat("ow/none/data")).toBeUndefined();
        expect((await store.list("ow")).keys).toEqual([]);
        await store.write("ow/none/data", new Uint8Array(0));
        expect(await store.append("ow/none/data", encoder.encode("x"), { expectedSize: 0, create: false })).toBe(1);
      });

      it("a second append while one is in progress: refused or queued, never interleaved", async () => {
        await store.append("ow/two", encoder.encode("0"));
        const held = heldStream(encoder.encode("aa"), encoder.encode("AA"));
        const first = store.append("ow/two", held.stream, { expectedSize: 1 });
        await held.started;
        const second = store.append("ow/two", encoder.encode("bb")).then(
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
        await store.append("ow/del/data", encoder.encode("abc"));
        const held = heldStream(encoder.encode("x"), encoder.encode("y"));
        const appending = store.append("ow/del/data", held.stream, { expectedSize: 3, create: false }).catch(() => undefined);
        await held.started;
        await store.deletePrefix("ow/del");
        held.release();
        await appending;
        await expectCode(store.append("ow/del/data", encoder.encode("z"), { expectedSize: 3, create: false }), "conflict");
        expect(await store.stat("ow/del/data")).toBeUndefined();
        expect((await store.list("ow")).keys).toEqual([]);
      });
    });

    describe("move", () => {
      it("renames, replacing the target", async () => {
        await put("mv/a", "new");
        await put("mv/b", "old target that is longer");
        await store.move("mv/a", "mv/b");
        expect(await readText("mv/b")).toBe("new");
        expect(await store.stat("mv/a")).toBeUndefined();
        expect((await store.list("mv")).keys).toEqual(["mv/b"]);
      });

      it("creates the target's prefixes", async () => {
        await put("mv/src", "x");
        await store.move("mv/src", "mv/deep/er/target");
        expect(await readText("mv/deep/er/target")).toBe("x");
      });

      it("throws not_found for a missing source and leaves the target", async () => {
        await put("mv/t", "keep");
        await expectCode(store.move("mv/none", "mv/t"), "not_found");
        await expectCode(store.move("mv/none", "mv/new"), "not_found");
        expect(await readText("mv/t")).toBe("keep");
        expect(await store.stat("mv/new")).toBeUndefined();
      });

      it("throws not_found when the source is only a prefix", async () => {
        await put("mv/dir/child", "x");
        await expectCode(store.move("mv/dir", "mv/other"), "not_found");
        expect(await readText("mv/dir/child")).toBe("x");
      });

      it("moving onto itself keeps the object", async () => {
        await put("mv/self", "same");
        await store.move("mv/self", "mv/self");
        expect(await readText("mv/self")).toBe("same");
      });
    });

    describe("delete", () => {
      it("deletes and is idempotent", async () => {
        await put("del/a", "x");
        await store.delete("del/a");
        expect(await store.stat("del/a")).toBeUndefined();
        await store.delete("del/a");
        await store.delete("del/never/existed");
      });

      it("does not delete what is under a key that is only a prefix", async () => {
        await put("del/p/child", "x");
        await store.delete("del/p");
        expect(await readText("del/p/child")).toBe("x");
      });

      it("lets a key be written again after its siblings and parents were emptied", async () => {
        await put("del/tree/a/b", "1");
        await store.delete("del/tree/a/b");
        expect((await store.list("del")).keys).toEqual([]);
        await put("del/tree/a", "2");
        expect(await readText("del/tree/a")).toBe("2");
      });
    });

    describe("deletePrefix", () => {
      it("removes everything under the prefix and nothing else", async () => {
        const keep = ["foo-bar/x", "foob/x", "fo/x", "foo.x/y", "other/foo/x"];
        const gone = ["foo/a", "foo/b/c", "foo/b/d/e"];
        for (const key of [...keep, ...gone]) await put(key, key);
        await store.deletePrefix("foo");
        for (const key of gone) expect(await store.stat(key)).toBeUndefined();
        for (const key of keep) expect(await readText(key)).toBe(key);
        expect((await store.list("foo")).keys).toEqual([]);
        await put("foo/again", "y");
        expect((await store.list("foo")).keys).toEqual(["foo/again"]);
      });

      it("does not remove an object named like the prefix", async () => {
        await put("solo", "me");
        await store.deletePrefix("solo");
        expect(await readText("solo")).toBe("me");
      });

      it("removes a nested prefix only", async () => {
        await put("np/a/x", "1");
        await put("np/ab/x", "2");
        await put("np/a/b/y", "3");
        await store.deletePrefix("np/a");
        expect((await store.list("np")).keys).toEqual(["np/ab/x"]);
      });

      it("is fine on a missing prefix", async () => {
        await store.deletePrefix("nothing/here");
      });
    });

    describe("list", () => {
      it("lists recursively in lexical order of the full key, objects only", async () => {
        const keys = ["l/b", "l/a-b", "l/a/b", "l/a/c/d", "l/a.b", "l/a0", "l/a+", "l/B", "l/_", "l/a:", "l/a@", "l/a=", "l/Z/z", "l/a/b-c", "l/a/b.c"];
        for (const key of keys) await put(key, "x");
        await put("l0/outside", "x");
        await put("k/outside", "x");
        expect(await store.list("l")).toEqual({ keys: [...keys].sort(), truncated: false });
        expect(await store.list("l/a")).toEqual({ keys: ["l/a/b", "l/a/b-c", "l/a/b.c", "l/a/c/d"], truncated: false });
      });

      it("isolates prefixes that share a beginning", async () => {
        await put("a/b/x", "1");
        await put("a/bc/y", "2");
        await put("a/b-/z", "3");
        expect((await store.list("a/b")).keys).toEqual(["a/b/x"]);
        expect((await store.list("a/bc")).keys).toEqual(["a/bc/y"]);
        expect((await store.list("a")).keys).toEqual(["a/b-/z", "a/b/x", "a/bc/y"]);
      });

      it("answers an empty page for a missing prefix or an object", async () => {
        expect(await store.list("none")).toEqual({ keys: [], truncated: false });
        await put("obj", "x");
        expect(await store.list("obj")).toEqual({ keys: [], truncated: false });
      });

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
          const page = await store.list("many", { limit: 100, ...(after === undefined ? {} : { after }) });
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
        expect(await store.list("e", { limit: 5 })).toEqual({ keys, truncated: false });
        expect(await store.list("e", { limit: 4 })).toEqual({ keys: keys.slice(0, 4), truncated: true });
        expect(await store.list("e", { limit: 0 })).toEqual({ keys: [], truncated: true });
        expect((await store.list("e", { after: "e/b/1" })).keys).toEqual(["e/b/2", "e/c", "e/d/x/y"]);
        // `after` need not be a key: a prefix of keys, or a key that sorts between two.
        expect((await store.list("e", { after: "e/b" })).keys).toEqual(["e/b/1", "e/b/2", "e/c", "e/d/x/y"]);
        expect((await store.list("e", { after: "e/b/15" })).keys).toEqual(["e/b/2", "e/c", "e/d/x/y"]);
        expect((await store.list("e", { after: "e/bz" })).keys).toEqual(["e/c", "e/d/x/y"]);
        expect((await store.list("e", { after: "a" })).keys).toEqual(keys);
        expect((await store.list("e", { after: "e/d/x/y" })).keys).toEqual([]);
        expect((await store.list("e", { after: "z" })).keys).toEqual([]);
        expect(await store.list("e", { after: "e/c", limit: 1 })).toEqual({ keys: ["e/d/x/y"], truncated: false });
      });
    });

    describe("atomicity and failures", () => {
      it("ten concurrent writers to one key: the result is exactly one writer's content", async () => {
        await put("cw/key", "initial");
        const contents = Array.from({ length: 10 }, (_, i) => {
          const data = randomBytes(64 * 1024 + i * 1000);
          data[0] = i;
          return data;
        });
        const seen: (Uint8Array | undefined)[] = [];
        let writing = true;
        const reader = (async () => {
          while (writing) {
            seen.push(await read("cw/key"));
            // Yield to timers: an in-memory driver answers in microtasks only.
            await new Promise((r) => setTimeout(r, 0));
          }
        })();
        const sizes = await Promise.all(contents.map((data) => store.write("cw/key", slowStream(split(data, 8)))));
        writing = false;
        await reader;
        expect(sizes).toEqual(contents.map((c) => c.byteLength));
        const final = await read("cw/key");
        expect(contents.some((c) => bytesEqual(final, c))).toBe(true);
        // Readers during the race saw the old object or one whole new one, never a mix.
        const initial = encoder.encode("initial");
        for (const got of seen) expect(bytesEqual(got, initial) || contents.some((c) => bytesEqual(got, c))).toBe(true);
        expect((await store.list("cw")).keys).toEqual(["cw/key"]);
      });

      it("a body that errors mid-way rejects with that error and leaves the old object", async () => {
        await put("fail/key", "old");
        const failure = new Error("boom");
        const error = await store.write("fail/key", failingStream([randomBytes(200_000), randomBytes(10)], failure)).then(
          () => undefined,
          (e: unknown) => e,
        );
        // The body's own error, or a StorageError("io") that carries it as cause.
        expect(error === failure || (error instanceof StorageError && error.code === "io" && error.cause === failure)).toBe(true);
        expect(await readText("fail/key")).toBe("old");
        await store.write("fail/new", failingStream([encoder.encode("x")], failure)).catch(() => {});
        expect(await store.stat("fail/new")).toBeUndefined();
        expect((await store.list("fail")).keys).toEqual(["fail/key"]);
      });

      it("an aborted write rejects with aborted and leaves the old object", async () => {
        await put("ab/key", "old");
        const controller = new AbortController();
        let sent = 0;
        // Endless body: only the abort can end this write.
        const body = new ReadableStream<Uint8Array>({
          pull(c) {
            sent++;
            if (sent === 5) controller.abort(new Error("client gone"));
            c.enqueue(randomBytes(16 * 1024));
          },
        });
        await expectCode(store.write("ab/key", body, { signal: controller.signal }), "aborted");
        expect(await readText("ab/key")).toBe("old");
      });

      it("an abort while the body is stalled rejects promptly", async () => {
        const controller = new AbortController();
        let cancelled = false;
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(encoder.encode("first chunk"));
          },
          pull() {
            return new Promise(() => {}); // never delivers more
          },
          cancel() {
            cancelled = true;
          },
        });
        const writing = store.write("ab/stalled", body, { signal: controller.signal });
        setTimeout(() => controller.abort(), 50);
        await expectCode(writing, "aborted");
        expect(await store.stat("ab/stalled")).toBeUndefined();
        await new Promise((r) => setTimeout(r, 10));
        expect(cancelled).toBe(true);
      });

      it("a signal aborted before the call writes nothing", async () => {
        const signal = AbortSignal.abort();
        await expectCode(store.write("ab/pre", encoder.encode("x"), { signal }), "aborted");
        await expectCode(store.append("ab/pre", encoder.encode("x"), { signal }), "aborted");
        expect(await store.stat("ab/pre")).toBeUndefined();
      });

      it("an aborted append rejects with aborted", async () => {
        await store.append("ab/up", encoder.encode("base"));
        const controller = new AbortController();
        const body = new ReadableStream<Uint8Array>({
          pull(c) {
            c.enqueue(encoder.encode("more"));
            controller.abort();
          },
        });
        await expectCode(store.append("ab/up", body, { signal: controller.signal }), "aborted");
        const size = (await store.stat("ab/up"))!.size;
        expect(await store.append("ab/up", encoder.encode("!"), { expectedSize: size })).toBe(size + 1);
      });

      it("a key that is an object and a prefix of another: allowed, or conflict with nothing lost", async () => {
        await put("fp/a", "file");
        const deeper = await store.write("fp/a/b", encoder.encode("deeper")).then(() => "ok", (e: unknown) => codeOf(e));
        expect(["ok", "conflict"]).toContain(deeper);
        expect(await readText("fp/a")).toBe("file");
        if (deeper === "ok") expect(await readText("fp/a/b")).toBe("deeper");

        await put("fq/a/b", "child");
        const shallower = await store.write("fq/a", encoder.encode("parent")).then(() => "ok", (e: unknown) => codeOf(e));
        expect(["ok", "conflict"]).toContain(shallower);
        expect(await readText("fq/a/b")).toBe("child");
      });
    });

    describe("invalid keys", () => {
      const bad: [string, string][] = [
        ["empty", ""],
        ["dot-dot", ".."],
        ["parent escape", "../x"],
        ["nested escape", "a/../../x"],
        ["dot segment", "a/./b"],
        ["single dot", "."],
        ["absolute", "/abs"],
        ["absolute etc", "/etc/passwd"],
        ["empty segment", "a//b"],
        ["trailing slash", "a/"],
        ["NUL", "a\u0000b"],
        ["backslash", "a\\b"],
        ["backslash escape", "..\\x"],
        ["percent-encoded NUL", "%00"],
        ["percent-encoded dots", "%2e%2e/x"],
        ["newline", "a\nb"],
        ["space", "a b"],
        ["tilde (temp names)", "~tmp/x"],
        ["non-ASCII", "caf\u00e9"],
        ["too long", "k/".repeat(600) + "k"],
        ["segment over 255", "s".repeat(256)],
      ];
      const good = "valid/key";

      it.each(bad)("rejects %s with invalid_key in every method", async (_, key) => {
        await put(good, "x");
        await expectCode(store.stat(key), "invalid_key");
        await expectCode(store.read(key), "invalid_key");
        await expectCode(store.read(key, { offset: 0, length: 1 }), "invalid_key");
        await expectCode(store.write(key, encoder.encode("x")), "invalid_key");
        await expectCode(store.append(key, encoder.encode("x")), "invalid_key");
        await expectCode(store.move(key, good), "invalid_key");
        await expectCode(store.move(good, key), "invalid_key");
        await expectCode(store.delete(key), "invalid_key");
        await expectCode(store.deletePrefix(key), "invalid_key");
        await expectCode(store.list(key), "invalid_key");
        expect(await readText(good)).toBe("x");
      });

      it("rejects without throwing synchronously", () => {
        const pending = store.stat("../x");
        expect(pending).toBeInstanceOf(Promise);
        return expectCode(pending, "invalid_key");
      });
    });

    describe("large streams", () => {
      it(
        `writes and reads back ${Math.round(largeBytes / MiB)} MiB streaming` + (checkMemory ? " with flat memory" : ""),
        async () => {
          const source = generated(largeBytes);
          collectGarbage();
          let rss0 = process.memoryUsage.rss();
          let peak = rss0;
          let t0 = performance.now();
          const written = await store.write("large/object", source.stream(() => {
            peak = Math.max(peak, process.memoryUsage.rss());
          }));
          peak = Math.max(peak, process.memoryUsage.rss());
          const writeStats = stats("write", largeBytes, performance.now() - t0, peak - rss0);
          options.onLargeStreamStats?.(writeStats);
          expect(written).toBe(largeBytes);
          expect((await store.stat("large/object"))?.size).toBe(largeBytes);
          if (checkMemory) expect(writeStats.rssGrowth).toBeLessThan(rssLimit);

          collectGarbage();
          rss0 = process.memoryUsage.rss();
          peak = rss0;
          t0 = performance.now();
          const stream = await store.read("large/object");
          expect(stream).toBeDefined();
          const hash = createHash("sha256");
          let size = 0;
          const reader = stream!.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            hash.update(value);
            size += value.byteLength;
            peak = Math.max(peak, process.memoryUsage.rss());
          }
          const readStats = stats("read", size, performance.now() - t0, peak - rss0);
          options.onLargeStreamStats?.(readStats);
          expect(size).toBe(largeBytes);
          expect(hash.digest("hex")).toBe(source.digest());
          if (checkMemory) expect(readStats.rssGrowth).toBeLessThan(rssLimit);
        },
        options.largeTimeout ?? 300_000,
      );
    });
  });
}

/** Collect garbage first when node runs with --expose-gc, so RSS is measured from a clean start. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function stats(phase: "write" | "read", bytes: number, milliseconds: number, rssGrowth: number): LargeStreamStats {
  return { phase, bytes, milliseconds, bytesPerSecond: (bytes / milliseconds) * 1000, rssGrowth };
}

/**
 * A pull-based stream of `total` pseudo-random bytes in 1 MiB chunks, generated
 * on demand (nothing is held), hashed as it is produced.
 */
function generated(total: number): { stream: (onChunk: () => void) => ReadableStream<Uint8Array>; digest: () => string } {
  const block = randomBytes(MiB);
  const hash = createHash("sha256");
  let digest: string | undefined;
  return {
    stream(onChunk) {
      let produced = 0;
      let index = 0;
      return new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            onChunk();
            if (produced >= total) {
              digest = hash.digest("hex");
              controller.close();
              return;
            }
            const size = Math.min(MiB, total - produced);
            // Each chunk differs (its index in front), so a misplaced chunk changes the digest.
            const chunk = new Uint8Array(size);
            chunk.set(block.subarray(0, size));
            new DataView(chunk.buffer).setUint32(0, index++ % 2 ** 32);
            hash.update(chunk);
            produced += size;
            controller.enqueue(chunk);
          },
        },
        { highWaterMark: 1 },
      );
    },
    digest() {
      if (digest === undefined) throw new Error("the stream was not read to the end");
      return digest;
    },
  };
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of streamIterator(stream)) {
    expect(chunk).toBeInstanceOf(Uint8Array);
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

async function* streamIterator(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function streamOfParts(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else controller.close();
    },
  });
}

/** Like {@link streamOfParts}, but each chunk after a macrotask, so concurrent writers interleave. */
function slowStream(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((r) => setTimeout(r, 1));
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else controller.close();
    },
  });
}

/**
 * A body that delivers `first`, then holds until `release()` before delivering
 * `rest`: an upload whose request body stalls mid-way. `started` resolves once
 * the driver has taken `first` and asked for more.
 */
function heldStream(first: Uint8Array, rest: Uint8Array): { stream: ReadableStream<Uint8Array>; started: Promise<void>; release: () => void } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const startedPromise = new Promise<void>((r) => (started = r));
  let step = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        step++;
        if (step === 1) controller.enqueue(first);
        else if (step === 2) {
          started();
          await gate;
          controller.enqueue(rest);
        } else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  // A driver that buffers a whole piece before writing asks for more at once; give it a moment.
  return { stream, started: startedPromise.then(() => new Promise((r) => setTimeout(r, 20))), release };
}

/** Delivers `parts`, then errors with `error`. */
function failingStream(parts: Uint8Array[], error: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((r) => setTimeout(r, 1));
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else controller.error(error);
    },
  });
}

function split(data: Uint8Array, count: number): Uint8Array[] {
  const size = Math.ceil(data.byteLength / count);
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < data.byteLength; offset += size) parts.push(data.subarray(offset, offset + size));
  return parts;
}

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

function codeOf(error: unknown): string | undefined {
  return error instanceof StorageError ? error.code : undefined;
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a StorageError "${code}"`).toBeInstanceOf(StorageError);
  expect((error as StorageError).code).toBe(code);
}
