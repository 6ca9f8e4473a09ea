/**
 * `createRegistry({ wrapStores })`: an embedder's wrapper sees every call of
 * the handlers, with every built-in feature below it; a `RegistryError` it
 * throws (`denied`) is answered as itself, anything else as a 500 with a log
 * event; a list applies its first wrapper outermost; headers a store attaches
 * reach the response.
 */
import { describe, expect, it } from "vitest";
import { denied, type StoreWrapper } from "../../src/registry/index.js";
import type { RegistryEvent } from "../../src/events/index.js";
import { bytes, errorCode, makeRegistry, pushBlob, pushImage, req, sha256 } from "./helpers.js";

/** Refuses blobs over `limit` bytes in repositories under `team/`. */
const noLargeBlobs = (limit: number): StoreWrapper => (below) => ({
  ...below,
  uploads: {
    ...below.uploads,
    async commit(name, session, digest, options, call) {
      if (name.startsWith("team/") && options.size > limit) {
        await below.uploads.cancel(name, session, call);
        throw denied(`blobs over ${limit} bytes are not accepted in team/`, { size: options.size, limit });
      }
      return below.uploads.commit(name, session, digest, options, call);
    },
  },
});

describe("createRegistry({ wrapStores })", () => {
  it("a wrapper's denied() is a 403 DENIED with its message and detail; other repositories and small blobs pass", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ wrapStores: noLargeBlobs(10), onEvent: (e) => void events.push(e) });
    const large = "more than ten bytes";
    const start = await registry(req("POST", `/v2/team/app/blobs/uploads/?digest=${sha256(large)}`, { body: large }));
    expect(start.status).toBe(403);
    const body = (await start.json()) as { errors: { code: string; message: string; detail: unknown }[] };
    expect(body.errors[0]).toEqual({ code: "DENIED", message: "blobs over 10 bytes are not accepted in team/", detail: { size: large.length, limit: 10 } });
    expect((await registry(req("HEAD", `/v2/team/app/blobs/${sha256(large)}`))).status).toBe(404);
    // The refusal happened above the event wrapper: no push was reported.
    expect(events.filter((e) => e.action === "push")).toEqual([]);
    await pushBlob(registry, "team/app", "tiny");
    await pushBlob(registry, "other/app", large);
    // Listeners are called after the response: wait for them.
    for (let i = 0; i < 100 && events.filter((e) => e.action === "push").length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(events.filter((e) => e.action === "push").map((e) => e.target.repository)).toEqual(["team/app", "other/app"]);
  });

  it("any other error thrown by a wrapper is a 500 with a generic body and an error log event", async () => {
    const logged: { msg: string; error?: unknown }[] = [];
    const broken: StoreWrapper = (below) => ({ ...below, tags: { ...below.tags, list: async () => { throw new Error("wrapper bug"); } } });
    const registry = makeRegistry({ wrapStores: broken, log: (e) => void logged.push(e) });
    await pushImage(registry, "a", "v1");
    const response = await registry(req("GET", "/v2/a/tags/list"));
    expect(response.status).toBe(500);
    expect(await errorCode(response)).toBe("UNKNOWN");
    expect(logged.find((e) => e.msg === "registry request failed")?.error).toEqual(new Error("wrapper bug"));
  });

  it("a list applies its first wrapper outermost, above every built-in feature", async () => {
    const order: string[] = [];
    const tracing = (label: string): StoreWrapper => (below) => ({
      ...below,
      manifests: { ...below.manifests, get: (...args) => (order.push(label), below.manifests.get(...args)) },
    });
    const registry = makeRegistry({ wrapStores: [tracing("outer"), tracing("inner")] });
    const image = await pushImage(registry, "a", "v1");
    order.length = 0;
    expect((await registry(req("GET", `/v2/a/manifests/${image.digest}`))).status).toBe(200);
    expect(order).toEqual(["outer", "inner"]);
  });

  it("headers a wrapper attaches to a store's answer reach the response", async () => {
    const tagged: StoreWrapper = (below) => ({
      ...below,
      blobs: { ...below.blobs, stat: async (...args) => { const info = await below.blobs.stat(...args); return info && { ...info, headers: { "X-Served-By": "wrapper" } }; } },
    });
    const registry = makeRegistry({ wrapStores: tagged });
    const digest = await pushBlob(registry, "a", bytes("blob"));
    const head = await registry(req("HEAD", `/v2/a/blobs/${digest}`));
    expect(head.status).toBe(200);
    expect(head.headers.get("x-served-by")).toBe("wrapper");
  });

  it("a wrapper that returns no complete set of stores is refused when the registry is made", () => {
    const { uploads: _gone, ...partial } = {} as Record<string, unknown>;
    expect(() => makeRegistry({ wrapStores: (below) => ({ ...below, uploads: undefined as never, ...partial }) })).toThrow(/no uploads store/);
  });
});
