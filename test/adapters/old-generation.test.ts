/**
 * The Node adapter's bound on the old generation (src/node/old-generation.ts):
 * with `gc()` exposed, a full collection once the old generation has grown by
 * 4 MiB since the last one, looked at every 1024 requests; on V8's real heap
 * (a real `gc`, exposed at run time), so the sizes are what the server sees.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";

const MiB = 1024 * 1024;
type Gc = () => void;
type Module = typeof import("../../src/node/old-generation.js");

setFlagsFromString("--expose-gc");
const realGc = runInNewContext("gc") as Gc;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  delete (globalThis as { gc?: Gc }).gc;
  vi.resetModules();
});

/** The module loaded afresh, with `gc` set to `spy` (or absent) first, as a process started with(out) --expose-gc. */
async function load(spy: Gc | undefined): Promise<Module> {
  if (spy) (globalThis as { gc?: Gc }).gc = spy;
  else delete (globalThis as { gc?: Gc }).gc;
  vi.resetModules();
  return import("../../src/node/old-generation.js");
}

/** About `mib` MiB of small objects moved to the old generation (a full collection promotes what lives); garbage once dropped. */
function promoted(mib: number): object[] {
  const objects: object[] = [];
  for (let i = 0; i < (mib * MiB) / 64; i++) objects.push({ a: i, b: i + 1, c: i + 2, d: i + 3, e: i + 4 });
  realGc();
  return objects;
}

describe("the old generation's bound", () => {
  it("collects once the old generation grew by 4 MiB of garbage, and the collection frees it", async () => {
    const gc = vi.fn(realGc);
    const { collectIfGrown, oldGenerationSize, GROWTH } = await load(gc);
    expect(GROWTH).toBe(4 * MiB);
    realGc();
    expect(collectIfGrown()).toBe(false); // the base
    promoted(3);
    const grown = oldGenerationSize();
    expect(collectIfGrown()).toBe(false); // under 4 MiB of growth: nothing
    expect(gc).not.toHaveBeenCalled();
    promoted(8);
    const before = oldGenerationSize();
    expect(before - grown).toBeGreaterThan(4 * MiB);
    expect(collectIfGrown()).toBe(true);
    expect(gc).toHaveBeenCalledTimes(1);
    // The garbage of both rounds is gone.
    expect(oldGenerationSize()).toBeLessThan(before - 8 * MiB);
    expect(collectIfGrown()).toBe(false);
  });

  it("moves its base up with what lives: one collection per 4 MiB of growth, not one per look", async () => {
    const gc = vi.fn(realGc);
    const { collectIfGrown } = await load(gc);
    realGc();
    expect(collectIfGrown()).toBe(false);
    const live = promoted(6);
    expect(collectIfGrown()).toBe(true);
    for (let i = 0; i < 5; i++) expect(collectIfGrown()).toBe(false);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(live.length).toBeGreaterThan(0); // read after the looks, so held through them
  });

  it("lowers its base when V8 collected by itself, so the next 4 MiB are counted from there", async () => {
    const gc = vi.fn(realGc);
    const { collectIfGrown } = await load(gc);
    realGc();
    promoted(3);
    expect(collectIfGrown()).toBe(false); // the base, with 3 MiB of garbage in it
    realGc(); // V8's own collection: the garbage is gone
    expect(collectIfGrown()).toBe(false); // the base lowered
    promoted(5);
    // 5 MiB above the lowered base (2 above the first one).
    expect(collectIfGrown()).toBe(true);
    expect(gc).toHaveBeenCalledTimes(1);
  });

  it("forces nothing once the old generation holds 64 MiB: a larger heap is left to V8's own collections", async () => {
    const gc = vi.fn(realGc);
    const { collectIfGrown, oldGenerationSize, BOUNDED_BELOW } = await load(gc);
    expect(BOUNDED_BELOW).toBe(64 * MiB);
    realGc();
    expect(collectIfGrown()).toBe(false);
    const live = promoted(Math.ceil((BOUNDED_BELOW - oldGenerationSize()) / MiB) + 4);
    expect(oldGenerationSize()).toBeGreaterThanOrEqual(BOUNDED_BELOW);
    expect(collectIfGrown()).toBe(false);
    expect(gc).not.toHaveBeenCalled();
    expect(live.length).toBeGreaterThan(0); // read after the looks, so held through them
  });

  it("looks every 1024 requests", async () => {
    const gc = vi.fn(realGc);
    const { countRequest } = await load(gc);
    realGc();
    for (let i = 0; i < 1024; i++) countRequest(); // the 1024th sets the base
    promoted(6);
    for (let i = 0; i < 1023; i++) countRequest();
    expect(gc).not.toHaveBeenCalled();
    countRequest();
    expect(gc).toHaveBeenCalledTimes(1);
  });

  it("does nothing when Node does not expose gc", async () => {
    const { collectIfGrown, countRequest } = await load(undefined);
    // gc appearing after the module loaded is not used: only a process started with --expose-gc collects.
    const late = vi.fn(realGc);
    (globalThis as { gc?: Gc }).gc = late;
    promoted(6);
    for (let i = 0; i < 4096; i++) countRequest();
    expect(collectIfGrown()).toBe(false);
    expect(late).not.toHaveBeenCalled();
  });

  it("is counted by the adapter's listener: the 2048th request finds the old garbage the one before left, and collects", async () => {
    const gc = vi.fn(realGc);
    (globalThis as { gc?: Gc }).gc = gc;
    vi.resetModules();
    const { serve } = await import("../../src/node/index.js");
    let served = 0;
    const running = await serve(() => {
      // The first look (the 1024th request) sets the base on a collected heap; the 2047th leaves 6 MiB of old
      // garbage (promoted by a full collection that also frees all else), which the next look finds.
      if (++served === 1000) realGc();
      if (served === 2047) promoted(6);
      return new Response("ok");
    });
    close = () => running.close(500);
    for (let i = 1; i <= 2048; i++) {
      expect((await fetch(running.url)).status).toBe(200);
      if (i === 2047) expect(gc).not.toHaveBeenCalled();
    }
    expect(gc).toHaveBeenCalledTimes(1);
  });
});
