/**
 * The "atomicity and failures" section of the storage contract: concurrent writers,
 * failing and aborted bodies, keys that are objects and prefixes.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { StorageError } from "../../storage/driver.js";
import { bytesEqual, codeOf, expectCode } from "./assertions.js";
import type { StorageContractContext } from "./context.js";
import { encoder, failingStream, randomBytes, slowStream, split } from "./streams-fixtures.js";

/** Declare the "atomicity and failures" tests. */
export function atomicityTests(ctx: StorageContractContext): void {
  describe("atomicity and failures", () => {
    racesAndBodyErrors(ctx);
    abortTests(ctx);
    objectAndPrefixTests(ctx);
  });
}

/** Concurrent writers and failing bodies: a reader sees the old object or one whole new one. */
function racesAndBodyErrors(ctx: StorageContractContext): void {
  const { read, readText, put } = ctx;
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
    const sizes = await Promise.all(contents.map((data) => ctx.store.write("cw/key", slowStream(split(data, 8)))));
    writing = false;
    await reader;
    expect(sizes).toEqual(contents.map((c) => c.byteLength));
    const final = await read("cw/key");
    expect(contents.some((c) => bytesEqual(final, c))).toBe(true);
    // Readers during the race saw the old object or one whole new one, never a mix.
    const initial = encoder.encode("initial");
    for (const got of seen) expect(bytesEqual(got, initial) || contents.some((c) => bytesEqual(got, c))).toBe(true);
    expect((await ctx.store.list("cw")).keys).toEqual(["cw/key"]);
  });

  it("a body that errors mid-way rejects with that error and leaves the old object", async () => {
    await put("fail/key", "old");
    const failure = new Error("boom");
    const error = await ctx.store.write("fail/key", failingStream([randomBytes(200_000), randomBytes(10)], failure)).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The body's own error, or a StorageError("io") that carries it as cause.
    expect(error === failure || (error instanceof StorageError && error.code === "io" && error.cause === failure)).toBe(true);
    expect(await readText("fail/key")).toBe("old");
    await ctx.store.write("fail/new", failingStream([encoder.encode("x")], failure)).catch(() => {});
    expect(await ctx.store.stat("fail/new")).toBeUndefined();
    expect((await ctx.store.list("fail")).keys).toEqual(["fail/key"]);
  });
}

/** An abort signal ends a write or append promptly, with `aborted`, and nothing half-written stays. */
function abortTests(ctx: StorageContractContext): void {
  const { readText, put } = ctx;
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
    await expectCode(ctx.store.write("ab/key", body, { signal: controller.signal }), "aborted");
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
    const writing = ctx.store.write("ab/stalled", body, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expectCode(writing, "aborted");
    expect(await ctx.store.stat("ab/stalled")).toBeUndefined();
    await new Promise((r) => setTimeout(r, 10));
    expect(cancelled).toBe(true);
  });

  it("a signal aborted before the call writes nothing", async () => {
    const signal = AbortSignal.abort();
    await expectCode(ctx.store.write("ab/pre", encoder.encode("x"), { signal }), "aborted");
    await expectCode(ctx.store.append("ab/pre", encoder.encode("x"), { signal }), "aborted");
    expect(await ctx.store.stat("ab/pre")).toBeUndefined();
  });

  it("an aborted append rejects with aborted", async () => {
    await ctx.store.append("ab/up", encoder.encode("base"));
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(encoder.encode("more"));
        controller.abort();
      },
    });
    await expectCode(ctx.store.append("ab/up", body, { signal: controller.signal }), "aborted");
    const size = (await ctx.store.stat("ab/up"))!.size;
    expect(await ctx.store.append("ab/up", encoder.encode("!"), { expectedSize: size })).toBe(size + 1);
  });
}

/** A key that is both an object and a prefix of another key. */
function objectAndPrefixTests(ctx: StorageContractContext): void {
  const { readText, put } = ctx;
  it("a key that is an object and a prefix of another: allowed, or conflict with nothing lost", async () => {
    await put("fp/a", "file");
    const deeper = await ctx.store.write("fp/a/b", encoder.encode("deeper")).then(() => "ok", (e: unknown) => codeOf(e));
    expect(["ok", "conflict"]).toContain(deeper);
    expect(await readText("fp/a")).toBe("file");
    if (deeper === "ok") expect(await readText("fp/a/b")).toBe("deeper");

    await put("fq/a/b", "child");
    const shallower = await ctx.store.write("fq/a", encoder.encode("parent")).then(() => "ok", (e: unknown) => codeOf(e));
    expect(["ok", "conflict"]).toContain(shallower);
    expect(await readText("fq/a/b")).toBe("child");
  });
}
