/**
 * The Node adapter's request bodies and V8's `gc()`: when Node exposes it
 * (`--expose-gc`), a young-generation collection runs every 4 MiB of body per
 * body being received, so the parser's per-chunk buffers are freed long
 * before V8's own 32 MiB rule would, and after each the old generation's
 * bound is checked (old-generation.ts, tested with the real heap in
 * old-generation.test.ts; a spy here); without it nothing is called. Bytes
 * the consumer freed itself (util/owned-chunks.ts) call for no collection.
 */
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";

const MiB = 1024 * 1024;
type Gc = (options?: { type?: string }) => void;

let close: (() => Promise<void>) | undefined;
/** The old generation's check, as the adapter loaded by {@link load} sees it. */
let bound = vi.fn(() => false);
afterEach(async () => {
  await close?.();
  close = undefined;
  delete (globalThis as { gc?: Gc }).gc;
  vi.doUnmock("../../src/node/old-generation.js");
  vi.resetModules();
});

/** registry-kit/node loaded afresh, with `gc` set to `spy` before it loads and its old-generation check a spy. */
async function load(spy: Gc | undefined): Promise<typeof import("../../src/node/index.js")> {
  if (spy) (globalThis as { gc?: Gc }).gc = spy;
  vi.resetModules();
  bound = vi.fn(() => false);
  vi.doMock("../../src/node/old-generation.js", async (original) => ({ ...(await original<object>()), collectIfGrown: bound }));
  return import("../../src/node/index.js");
}

/** Read a request's body to its end; its length. */
async function drain(req: Request): Promise<number> {
  const reader = req.body!.getReader();
  let n = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.byteLength;
  return n;
}

/** Serve a handler that reads and drops each request body; with `gc` set to `spy` before the adapter loads. */
async function server(spy: Gc | undefined): Promise<string> {
  const { serve } = await load(spy);
  const running = await serve(async (req: Request) => {
    return new Response(String(await drain(req)));
  });
  close = () => running.close(500);
  return running.url;
}

/** PUT `size` bytes in 64 KiB writes, pausing after `pauseAt` bytes until `resume` settles. */
function put(url: string, size: number, pauseAt = Infinity, resume: Promise<void> = Promise.resolve()): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/upload`, { method: "PUT", headers: { "content-length": String(size) } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve(text));
    });
    req.on("error", reject);
    const chunk = Buffer.alloc(64 * 1024, 7);
    const pump = async (): Promise<void> => {
      for (let sent = 0; sent < size; sent += chunk.length) {
        if (sent === pauseAt) await resume;
        if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
      }
      req.end();
    };
    pump().catch(reject);
  });
}

describe("request bodies and gc()", () => {
  it("runs a minor collection every 4 MiB of one body when gc is exposed", async () => {
    const gc = vi.fn<Gc>();
    const url = await server(gc);
    // Each collection comes at the first chunk that reaches 4 MiB since the last (chunks are up to 64 KiB).
    expect(await put(url, 20 * MiB + 512 * 1024)).toBe(String(20 * MiB + 512 * 1024));
    expect(gc).toHaveBeenCalledTimes(5);
    for (const call of gc.mock.calls) expect(call).toEqual([{ type: "minor" }]);
    // After each, the old generation is looked at: a transfer makes too few requests for the look every 1024.
    expect(bound).toHaveBeenCalledTimes(5);
    for (let i = 0; i < 5; i++) expect(bound.mock.invocationCallOrder[i]!).toBeGreaterThan(gc.mock.invocationCallOrder[i]!);
  });

  it("spaces the collections by 4 MiB per body while two bodies arrive together", async () => {
    const gc = vi.fn<Gc>();
    const url = await server(gc);
    // Both bodies are under way before either sends its bulk: the interval is then 8 MiB.
    let go!: () => void;
    const together = new Promise<void>((r) => (go = r));
    const a = put(url, 16 * MiB + 64 * 1024, 64 * 1024, together);
    const b = put(url, 16 * MiB + 64 * 1024, 64 * 1024, together);
    await vi.waitFor(() => expect(gc).not.toHaveBeenCalled(), { timeout: 200 });
    await new Promise((r) => setTimeout(r, 200)); // the first 64 KiB of each has arrived
    go();
    expect(await a).toBe(String(16 * MiB + 64 * 1024));
    expect(await b).toBe(String(16 * MiB + 64 * 1024));
    // 32.125 MiB in all at 8 MiB a collection while both arrive: 4 (at most 5 once one has ended)
    expect(gc.mock.calls.length).toBeGreaterThanOrEqual(4);
    expect(gc.mock.calls.length).toBeLessThanOrEqual(5);
  });

  it("stops counting a body its handler leaves unread, and one that ended", async () => {
    const gc = vi.fn<Gc>();
    const { serve } = await load(gc);
    const running = await serve(async (req: Request) => {
      if (new URL(req.url).pathname === "/skip") return new Response("skipped"); // the body is cancelled, never read
      return new Response(String(await drain(req)));
    });
    close = () => running.close(500);
    for (let i = 0; i < 3; i++) {
      const skipped = await fetch(`${running.url}/skip`, { method: "PUT", body: new Uint8Array(3 * MiB) });
      expect(await skipped.text()).toBe("skipped");
    }
    expect(await put(running.url, 2 * MiB)).toBe(String(2 * MiB));
    gc.mockClear();
    // Were any of those still counted as receiving, the interval would be 8 MiB or more, not 4.
    expect(await put(running.url, 20 * MiB + 512 * 1024)).toBe(String(20 * MiB + 512 * 1024));
    expect(gc).toHaveBeenCalledTimes(5);
  });

  it("runs no minor collection for bytes its consumer freed once used (the fs driver's owned chunks), yet looks at the old generation", async () => {
    const gc = vi.fn<Gc>();
    const { serve } = await load(gc);
    // The same module instance as the adapter just loaded (load() reset the module registry).
    const owned = { ...(await import("../../src/util/owned-chunks.js")), ...(await import("../../src/runtime/adapter-capabilities.js")) };
    let marked = false;
    const running = await serve(async (req: Request) => {
      marked = owned.hasOwnedChunks(req.body);
      const reader = req.body!.getReader();
      let n = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        n += r.value.byteLength;
        owned.releaseChunks([r.value]);
      }
      return new Response(String(n));
    });
    close = () => running.close(500);
    const before = owned.bytesReleased();
    expect(await put(running.url, 20 * MiB + 512 * 1024)).toBe(String(20 * MiB + 512 * 1024));
    expect(marked).toBe(true);
    expect(owned.bytesReleased() - before).toBe(20 * MiB + 512 * 1024);
    expect(gc).not.toHaveBeenCalled();
    expect(bound.mock.calls.length).toBeGreaterThanOrEqual(5);
  });

  it("calls nothing when Node does not expose gc", async () => {
    const url = await server(undefined);
    // gc appearing after the adapter loaded is not used: only a process started with --expose-gc collects.
    const late = vi.fn<Gc>();
    (globalThis as { gc?: Gc }).gc = late;
    expect(await put(url, 12 * MiB)).toBe(String(12 * MiB));
    expect(late).not.toHaveBeenCalled();
    expect(bound).not.toHaveBeenCalled();
  });
});
