import { describe, expect, it } from "vitest";
import { lockstepTee } from "../../src/util/lockstep-tee.js";

/** A source of `n` one-byte chunks that counts how many were read from it. */
function counted(n: number) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === n) return controller.close();
        controller.enqueue(new Uint8Array([pulled++]));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

describe("lockstepTee", () => {
  it("reads the source no further than the slower branch asked", async () => {
    const source = counted(100);
    const [fast, slow] = lockstepTee(source.stream);
    const fastReader = fast.getReader();
    const slowReader = slow.getReader();
    const first = fastReader.read();
    await new Promise((r) => setTimeout(r, 5));
    expect(source.pulled()).toBe(0); // the slow branch has not asked yet
    await slowReader.read();
    expect((await first).value).toEqual(new Uint8Array([0]));
    const ahead = fastReader.read();
    await new Promise((r) => setTimeout(r, 5));
    expect(source.pulled()).toBe(1);
    await slowReader.read();
    expect((await ahead).value).toEqual(new Uint8Array([1]));
  });

  it("goes on for the other branch once one is cancelled, and cancels the source when both are", async () => {
    const source = counted(10);
    const [a, b] = lockstepTee(source.stream);
    await a.cancel();
    const got = new Uint8Array(await new Response(b).arrayBuffer());
    expect(got).toEqual(Uint8Array.from({ length: 10 }, (_, i) => i));
    let cancelled = false;
    const [c, d] = lockstepTee(new ReadableStream({ cancel: () => void (cancelled = true) }));
    await c.cancel();
    await d.cancel();
    expect(cancelled).toBe(true);
  });

  it("errors both branches when the source fails", async () => {
    const [a, b] = lockstepTee(new ReadableStream({ pull: (c) => c.error(new Error("boom")) }));
    await expect(Promise.all([new Response(a).arrayBuffer(), new Response(b).arrayBuffer()])).rejects.toThrow("boom");
  });
});
