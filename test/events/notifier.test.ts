/**
 * Webhook notifications through the durable outbox, with real receivers on
 * loopback: envelopes in Distribution's shape, filters, retries while an
 * endpoint fails, resumption by a new notifier on the same store (a restart),
 * several notifiers on one fs store delivering each event once, delivery from
 * memory of what the lease holder wrote. The envelope, failure and batching
 * cases run with each POST: `fetch` (the default), `nodeWebhookPost`, and
 * `nodeWebhookPost({ worker: true })`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EVENTS_MEDIA_TYPE, createNotifier, type Notifier, type RegistryEvent, type WebhookPost } from "../../src/events/index.js";
import { nodeWebhookPost } from "../../src/node/index.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { makeRegistry, pushImage, req } from "../registry/helpers.js";
import { startReceiver, waitFor, type Receiver } from "./receiver.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

function notifierWith(storage: StorageDriver, endpoints: Parameters<typeof createNotifier>[0]["endpoints"], extra: Partial<Parameters<typeof createNotifier>[0]> = {}): Notifier {
  const n = createNotifier({ storage, endpoints, pollMs: 20, pullFlushMs: 20, ...extra });
  cleanups.push(() => n.close());
  return n;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "rk-events-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Storage that records the keys of outbox objects given to its `method`. */
function counting(storage: StorageDriver, method: "read" | "write"): { storage: StorageDriver; keys: string[] } {
  const keys: string[] = [];
  const counted = new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== method || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
      return (key: string, ...rest: unknown[]) => {
        if (key.startsWith("_events/outbox/")) keys.push(key);
        return (value as (...args: unknown[]) => unknown).call(target, key, ...rest);
      };
    },
  });
  return { storage: counted, keys };
}

/** Storage that counts reads of outbox objects. */
function countingReads(storage: StorageDriver): { storage: StorageDriver; reads: string[] } {
  const { storage: counted, keys } = counting(storage, "read");
  return { storage: counted, reads: keys };
}

/** Storage that records the keys of outbox objects written. */
function countingWrites(storage: StorageDriver): { storage: StorageDriver; writes: string[] } {
  const { storage: counted, keys } = counting(storage, "write");
  return { storage: counted, writes: keys };
}

const transports: [string, WebhookPost | undefined][] = [["fetch", undefined], ["nodeWebhookPost", nodeWebhookPost()], ["nodeWebhookPost from a worker thread", nodeWebhookPost({ worker: true })]];

describe.each(transports)("createNotifier, POST through %s", (_label, post) => {
  const notifier = (storage: StorageDriver, endpoints: Parameters<typeof createNotifier>[0]["endpoints"], extra: Partial<Parameters<typeof createNotifier>[0]> = {}): Notifier =>
    notifierWith(storage, endpoints, { ...(post ? { post } : {}), ...extra });

  it("POSTs Distribution envelopes: push of blobs then manifest, pull, delete of the manifest then of its tag; no references by default; headers sent", async () => {
    const sink = await receiver();
    const storage = memoryStorage();
    const n = notifier(storage, [{ name: "ci", url: sink.url, headers: { Authorization: "Bearer s3cret", "X-Tags": ["a", "b"], "Content-Type": "text/plain" } }]);
    n.start();
    const registry = makeRegistry({ storage, deleteEnabled: true, onEvent: n });
    const image = await pushImage(registry, "team/app", "v1");
    await (await registry(req("GET", "/v2/team/app/manifests/v1"))).arrayBuffer();
    expect((await registry(req("DELETE", `/v2/team/app/manifests/${image.digest}`))).status).toBe(202);
    await waitFor(() => sink.events().length === 6, "6 events");
    expect(sink.events().map((e) => `${e.action} ${e.target.digest ?? `tag ${e.target.tag}`}`)).toEqual([
      `push ${image.config}`,
      `push ${image.layer}`,
      `push ${image.digest}`,
      `pull ${image.digest}`,
      `delete ${image.digest}`,
      "delete tag v1",
    ]);
    expect(sink.envelopes.every((e) => e.contentType === EVENTS_MEDIA_TYPE)).toBe(true);
    expect(sink.envelopes[0]!.headers.authorization).toBe("Bearer s3cret");
    expect(sink.envelopes[0]!.headers["x-tags"]).toBe("a, b");
    expect(sink.events()[2]!.target.references).toBeUndefined();
    // Delivered objects are removed from the outbox.
    await waitFor(() => sink.envelopes.length > 0, "any");
    await n.deliverOnce();
    expect((await storage.list("_events/outbox")).keys).toEqual([]);
  });

  it("includeReferences sends the manifest's references; ignore.actions and ignoredmediatypes filter; a disabled endpoint gets nothing", async () => {
    const [full, filtered, off] = [await receiver(), await receiver(), await receiver()];
    const storage = memoryStorage();
    const n = notifier(storage, [
      { name: "full", url: full.url },
      { name: "filtered", url: filtered.url, ignore: { actions: ["pull"] }, ignoredmediatypes: ["application/octet-stream"] },
      { name: "off", url: off.url, disabled: true },
    ], { includeReferences: true });
    n.start();
    const registry = makeRegistry({ storage, onEvent: n });
    const image = await pushImage(registry, "a", "v1");
    await (await registry(req("GET", "/v2/a/manifests/v1"))).arrayBuffer();
    await waitFor(() => full.events().length === 4 && filtered.events().length === 1, "both endpoints");
    expect(full.events()[2]!.target.references?.map((r) => r.digest)).toEqual([image.config, image.layer]);
    expect(filtered.events().map((e) => e.action)).toEqual(["push"]);
    expect(filtered.events()[0]!.target.digest).toBe(image.digest);
    expect(off.attempts).toBe(0);
  });

  it("an endpoint answering 500 gets every event once it recovers, in order; a healthy endpoint is not held up", async () => {
    const [failing, healthy] = [await receiver(), await receiver()];
    failing.answer = 500;
    const storage = memoryStorage();
    const n = notifier(storage, [{ name: "failing", url: failing.url, threshold: 2, backoff: 50 }, { name: "healthy", url: healthy.url }]);
    n.start();
    const registry = makeRegistry({ storage, onEvent: n });
    for (let i = 0; i < 3; i++) await pushImage(registry, "r", `t${i}`, `seed${i}`);
    await waitFor(() => healthy.events().length === 9 && failing.attempts >= 4, "healthy delivery and retries");
    expect(failing.events()).toEqual([]);
    failing.answer = 200;
    await waitFor(() => failing.events().length === 9, "delivery after recovery");
    expect(failing.events().map((e) => e.id)).toEqual(healthy.events().map((e) => e.id));
  });

  it("a hanging endpoint does not hold up requests: its POST times out and is retried", async () => {
    const hang = await receiver();
    hang.answer = "hang";
    const storage = memoryStorage();
    const logged: string[] = [];
    const n = notifier(storage, [{ name: "hang", url: hang.url, timeout: 100, threshold: 1, backoff: 20 }], { log: (entry) => void logged.push(String(entry.error ?? "")) });
    n.start();
    const registry = makeRegistry({ storage, onEvent: n });
    await pushImage(registry, "a", "v1");
    await waitFor(() => hang.attempts >= 2, "a retry after the timeout");
    expect(logged).toContain("endpoint hang: no answer within 100 ms");
    hang.answer = 200;
    await waitFor(() => hang.events().length === 3, "delivery");
  });

  it("envelopes hold at most maxBatch events; an endpoint answering 413 gets smaller ones, every event once and in order", async () => {
    const [batched, small] = [await receiver(), await receiver()];
    small.maxEvents = 3;
    const storage = memoryStorage();
    const n = notifier(storage, [{ name: "batched", url: batched.url }, { name: "small", url: small.url }], { maxBatch: 4, pullFlushMs: 60_000 });
    const registry = makeRegistry({ storage, onEvent: n });
    await pushImage(registry, "a", "v1");
    for (let i = 0; i < 10; i++) await (await registry(req("GET", "/v2/a/manifests/v1"))).arrayBuffer();
    await n.flush();
    n.start();
    await waitFor(() => batched.events().length === 13 && small.events().length === 13, "13 events at each endpoint");
    expect(batched.envelopes.map((e) => e.events.length)).toEqual([4, 4, 4, 1]);
    // 4 refused as too large, then halved to 2 for the rest of the queue.
    expect(small.envelopes.every((e) => e.events.length <= 2)).toBe(true);
    expect(small.attempts).toBe(small.envelopes.length + 1);
    expect(small.events().map((e) => e.id)).toEqual(batched.events().map((e) => e.id));
    expect(new Set(batched.events().map((e) => e.id)).size).toBe(13);
    expect(batched.events().map((e) => e.action)).toEqual([...Array(3).fill("push"), ...Array(10).fill("pull")]);
  });
});

describe("createNotifier", () => {
  const notifier = notifierWith;

  it("an endpoint answering 500 for 30 s, with Distribution's default backoff (1 s), gets every event afterwards, each once", async () => {
    const sink = await receiver();
    sink.answer = 500;
    const storage = memoryStorage();
    const n = notifier(storage, [{ name: "down", url: sink.url, threshold: 3, backoff: 1000 }]);
    n.start();
    const registry = makeRegistry({ storage, onEvent: n });
    for (let i = 0; i < 4; i++) await pushImage(registry, "r", `t${i}`, `seed${i}`);
    const downSince = Date.now();
    await new Promise((r) => setTimeout(r, 30_000));
    expect(sink.events()).toEqual([]);
    // It kept trying all along (one POST per backoff at least), and nothing was dropped meanwhile.
    expect(sink.attempts).toBeGreaterThanOrEqual(10);
    sink.answer = 200;
    await waitFor(() => sink.events().length === 12, "delivery after 30 s of 500s", 20_000);
    expect(Date.now() - downSince).toBeGreaterThanOrEqual(30_000);
    const ids = sink.events().map((e) => e.id);
    expect(new Set(ids).size).toBe(12);
    expect(sink.events().map((e) => e.action)).toEqual(Array.from({ length: 4 }, () => ["push", "push", "push"]).flat());
  }, 90_000);

  it("events recorded while nothing delivers are delivered by a later notifier on the same fs store (a restart)", async () => {
    const sink = await receiver();
    const dir = tempDir();
    const first = createNotifier({ storage: fsStorage({ root: dir }), endpoints: [{ name: "ci", url: sink.url }], pollMs: 20 });
    const registry = makeRegistry({ storage: fsStorage({ root: dir }), onEvent: first });
    const image = await pushImage(registry, "a", "v1");
    // never started, never closed: as after a crash
    const second = notifier(fsStorage({ root: dir }), [{ name: "ci", url: sink.url }]);
    second.start();
    await waitFor(() => sink.events().length === 3, "3 events after restart");
    expect(sink.events().map((e) => e.target.digest)).toEqual([image.config, image.layer, image.digest]);
  });

  it("three notifiers on one fs store deliver each of 30 events exactly once", async () => {
    const sink = await receiver();
    const dir = tempDir();
    const notifiers = [0, 1, 2].map(() => notifier(fsStorage({ root: dir }), [{ name: "ci", url: sink.url }], { leaseMs: 5_000 }));
    const registries = notifiers.map((n) => makeRegistry({ storage: fsStorage({ root: dir }), onEvent: n }));
    for (const n of notifiers) n.start();
    for (let i = 0; i < 10; i++) await pushImage(registries[i % 3]!, `r${i % 3}`, `t${i}`, `s${i}`);
    await waitFor(() => sink.events().length >= 30, "30 events");
    await new Promise((r) => setTimeout(r, 200));
    const ids = sink.events().map((e) => e.id);
    expect(ids.length).toBe(30);
    expect(new Set(ids).size).toBe(30);
  });

  it("two notifiers of one process on one store, writing in the same millisecond, keep each other's events", async () => {
    const sink = await receiver();
    const shared = memoryStorage();
    const [a, b] = [0, 1].map(() => notifier(shared, [{ name: "ci", url: sink.url }]));
    const frozen = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    try {
      await pushImage(makeRegistry({ storage: shared, onEvent: a! }), "a", "v1");
      await pushImage(makeRegistry({ storage: shared, onEvent: b! }), "b", "v1");
    } finally {
      frozen.mockRestore();
    }
    expect((await shared.list("_events/outbox/ci")).keys).toHaveLength(6);
    await a!.deliverOnce();
    expect(sink.events().map((e) => e.target.repository).sort()).toEqual(["a", "a", "a", "b", "b", "b"]);
    expect(new Set(sink.events().map((e) => e.id)).size).toBe(6);
  });

  it("while it holds the lease, a notifier delivers what it wrote without reading it back; what another process wrote is read from storage", async () => {
    const sink = await receiver();
    const shared = memoryStorage();
    const { storage, reads } = countingReads(shared);
    const holder = notifier(storage, [{ name: "ci", url: sink.url }]);
    await holder.deliverOnce(); // takes the lease
    holder.start();
    const registry = makeRegistry({ storage: shared, onEvent: holder });
    const own = await pushImage(registry, "a", "v1");
    for (let i = 0; i < 5; i++) await (await registry(req("GET", "/v2/a/manifests/v1"))).arrayBuffer();
    await waitFor(() => sink.events().length === 8, "the holder's 8 events");
    expect(reads).toEqual([]);
    // A second process on the store records but does not deliver (the lease is taken): the holder reads its objects.
    const other = notifier(shared, [{ name: "ci", url: sink.url }]);
    other.start();
    const otherRegistry = makeRegistry({ storage: shared, onEvent: other });
    const theirs = await pushImage(otherRegistry, "b", "v1", "other");
    await waitFor(() => sink.events().length === 11, "the other process's 3 events");
    expect(reads.length).toBe(3);
    expect(sink.events().map((e) => e.target.digest)).toEqual([own.config, own.layer, own.digest, ...Array(5).fill(own.digest), theirs.config, theirs.layer, theirs.digest]);
    expect(new Set(sink.events().map((e) => e.id)).size).toBe(11);
    await holder.deliverOnce();
    expect((await shared.list("_events/outbox")).keys).toEqual([]);
  });
});

describe("createNotifier, pulls delivered from memory", () => {
  const pull = async (registry: ReturnType<typeof makeRegistry>, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await (await registry(req("GET", "/v2/a/manifests/v1"))).arrayBuffer();
  };

  it("pulls the endpoint takes within the flush bound are never written: full batches at once, the rest after half the bound", async () => {
    const sink = await receiver();
    const { storage, writes } = countingWrites(memoryStorage());
    await pushImage(makeRegistry({ storage }), "a", "v1"); // no events: the queue starts empty
    const n = notifierWith(storage, [{ name: "ci", url: sink.url }], { maxBatch: 5, pullFlushMs: 8_000, pollMs: 600_000 });
    await n.deliverOnce(); // takes the lease
    n.start(); // its first pass finds nothing; the next is 10 min away
    const registry = makeRegistry({ storage, onEvent: n });
    const t0 = Date.now();
    await pull(registry, 12);
    // Pulls are due after half the bound (4 s): before that, only full batches (woken at once) can have gone.
    await waitFor(() => sink.events().length >= 10, "two full batches", 3_500);
    // The 2 after them wait for the bound, though they were in memory when those were sent.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(Date.now() - t0).toBeLessThan(3_500);
    expect(sink.events()).toHaveLength(10);
    await waitFor(() => sink.events().length === 12, "the rest");
    expect(Date.now() - t0).toBeLessThan(8_000); // before the flush bound
    await n.flush(); // nothing is left to write
    expect(writes).toEqual([]);
    // Whole batches only while the bound is not reached, however many pulls came in while a pass started.
    expect(sink.envelopes.map((e) => e.events.length)).toEqual([5, 5, 2]);
    expect(sink.events().map((e) => e.action)).toEqual(Array(12).fill("pull"));
    expect(new Set(sink.events().map((e) => e.id)).size).toBe(12);
  });

  it("a function listener beside the notifier sees each event as delivered (same id, same fields)", async () => {
    const sink = await receiver();
    const storage = memoryStorage();
    const n = notifierWith(storage, [{ name: "ci", url: sink.url }]);
    n.start();
    const heard: RegistryEvent[] = [];
    const registry = makeRegistry({ storage, onEvent: [n, (event) => void heard.push(event)] });
    await pushImage(registry, "a", "v1");
    await pull(registry, 3);
    // Listeners run in a later task and pulls go after half the flush bound: wait for both to have all three.
    const pulls = (events: RegistryEvent[]): number => events.filter((e) => e.action === "pull").length;
    await waitFor(() => pulls(sink.events()) === 3 && pulls(heard) === 3, "the three pulls, delivered and heard");
    await waitFor(() => sink.events().length === heard.filter((e) => e.action !== "upload.started" && e.action !== "repository.created").length, "every Distribution event");
    const delivered = sink.events();
    expect(delivered.filter((e) => e.action === "pull")).toHaveLength(3);
    // The endpoint gets no references (includeReferences is off); everything else is the listener's event.
    const byId = new Map(heard.map(({ target: { references: _r, ...target }, ...e }) => [e.id, JSON.parse(JSON.stringify({ ...e, target })) as unknown]));
    for (const event of delivered) expect(byId.get(event.id)).toEqual(event);
  });

  it("pulls the endpoint refuses from memory are written in their place, with the ids they were sent with: delivered before a later push, each once", async () => {
    const sink = await receiver();
    const { storage, writes } = countingWrites(memoryStorage());
    const n = notifierWith(storage, [{ name: "ci", url: sink.url, threshold: 1, backoff: 300 }], { maxBatch: 4, pullFlushMs: 60_000, pollMs: 20 });
    await n.deliverOnce();
    n.start();
    const registry = makeRegistry({ storage, onEvent: n });
    const first = await pushImage(registry, "a", "v1");
    await waitFor(() => sink.events().length === 3, "the push");
    const pushed = writes.length;
    const before = sink.attempts;
    sink.answer = 500;
    await pull(registry, 4); // a full batch: sent from memory, refused
    await waitFor(() => sink.attempts > before && writes.length === pushed + 1, "the refused pulls written");
    const second = await pushImage(registry, "b", "v1", "later");
    expect(writes.length).toBe(pushed + 4);
    expect(writes[pushed]! < writes[pushed + 1]!).toBe(true); // the pulls' object sorts before the later push
    sink.answer = 200;
    await waitFor(() => sink.events().length === 10, "every event after recovery");
    expect(sink.events().map((e) => `${e.action} ${e.target.digest}`)).toEqual([
      ...[first.config, first.layer, first.digest].map((d) => `push ${d}`),
      ...Array(4).fill(`pull ${first.digest}`),
      ...[second.config, second.layer, second.digest].map((d) => `push ${d}`),
    ]);
    expect(new Set(sink.events().map((e) => e.id)).size).toBe(10);
    // The endpoint may have taken the refused batch: it comes again as it was, so a receiver can drop it by id.
    expect(sink.refused[0]).toEqual(sink.events().slice(3, 7));
    await n.deliverOnce();
    expect((await storage.list("_events/outbox")).keys).toEqual([]);
  });

  it("while the queue stays empty and this process writes nothing to it, it is listed again at most every 250 ms; another process's push is still delivered", async () => {
    const sink = await receiver();
    const shared = memoryStorage();
    let lists = 0;
    const storage = new Proxy(shared, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop === "list") return (prefix: string, ...rest: unknown[]) => (prefix.startsWith("_events/outbox/") && lists++, (value as (...args: unknown[]) => unknown).call(target, prefix, ...rest));
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await pushImage(makeRegistry({ storage: shared }), "a", "v1");
    const holder = notifierWith(storage, [{ name: "ci", url: sink.url }], { maxBatch: 2, pullFlushMs: 60_000, pollMs: 100 });
    await holder.deliverOnce(); // takes the lease (one listing)
    holder.start();
    const registry = makeRegistry({ storage: shared, onEvent: holder });
    const t0 = Date.now();
    // 20 full batches, one at a time: each wakes a delivery pass of its own.
    for (let batch = 1; batch <= 20; batch++) {
      await pull(registry, 2);
      await waitFor(() => sink.events().length === 2 * batch, `batch ${batch}`);
    }
    const elapsed = Date.now() - t0;
    // A listing for each pass would be 20 or more; one per 250 ms, and the one before, at most this.
    expect(lists).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 250));
    expect(lists).toBeLessThan(20);
    // Another process records a push (written at once): the holder finds it at a pass after the 250 ms.
    const other = notifierWith(shared, [{ name: "ci", url: sink.url }]);
    const pushed = await pushImage(makeRegistry({ storage: shared, onEvent: other }), "b", "v1", "other");
    await waitFor(() => sink.events().length === 43, "the other process's push", 3_000);
    expect(sink.events().slice(40).map((e) => e.target.digest)).toEqual([pushed.config, pushed.layer, pushed.digest]);
    expect(new Set(sink.events().map((e) => e.id)).size).toBe(43);
  });

  it("pulls refused from memory and written come before pulls recorded after them, even when those follow at once (a write makes the queue listed again)", async () => {
    const sink = await receiver();
    const { storage, writes } = countingWrites(memoryStorage());
    await pushImage(makeRegistry({ storage }), "a", "v1");
    // No backoff: the next pass comes right after the refused one, well within the 250 ms an empty listing is trusted.
    const n = notifierWith(storage, [{ name: "ci", url: sink.url, threshold: 100 }], { maxBatch: 4, pullFlushMs: 60_000, pollMs: 20 });
    await n.deliverOnce();
    n.start();
    const registry = makeRegistry({ storage, onEvent: n });
    sink.answer = 500;
    await pull(registry, 4);
    await waitFor(() => writes.length === 1, "the refused pulls written");
    sink.answer = 200;
    await pull(registry, 4);
    await waitFor(() => sink.events().length === 8, "all 8 pulls");
    // The refused batch first, as it was sent; then the 4 recorded after it.
    expect(sink.events().slice(0, 4)).toEqual(sink.refused[0]);
    expect(new Set(sink.events().map((e) => e.id)).size).toBe(8);
  });

  it("a process without the lease writes its pulls for the holder, which delivers them", async () => {
    const sink = await receiver();
    const shared = memoryStorage();
    const holder = notifierWith(shared, [{ name: "ci", url: sink.url }], { maxBatch: 2 });
    await holder.deliverOnce();
    holder.start();
    const { storage, writes } = countingWrites(shared);
    const other = notifierWith(storage, [{ name: "ci", url: sink.url }], { maxBatch: 2 });
    other.start();
    const registry = makeRegistry({ storage: shared, onEvent: other });
    await pushImage(registry, "a", "v1");
    await pull(registry, 4);
    await waitFor(() => sink.events().length === 7, "7 events through the holder");
    expect(writes.length).toBeGreaterThanOrEqual(4); // three pushes, and the pulls at the flush (20 ms)
    expect(sink.events().map((e) => e.action)).toEqual([...Array(3).fill("push"), ...Array(4).fill("pull")]);
  });
});

describe("nodeWebhookPost", () => {
  it("sends the endpoint's header lines as given, its own Host (from the URL unless the endpoint names one) and Content-Length", async () => {
    const sink = await receiver();
    const post = nodeWebhookPost();
    const body = new TextEncoder().encode('{"events":[]}');
    const lines: [string, string][] = [["X-Tags", "a"], ["X-Tags", "b"], ["Content-Length", "999"], ["Content-Type", EVENTS_MEDIA_TYPE]];
    expect(await post(sink.url, lines, body, AbortSignal.timeout(5000))).toBe(200);
    expect(await post(sink.url, [["Host", "events.example"], ...lines], body, AbortSignal.timeout(5000))).toBe(200);
    const [first, second] = sink.envelopes.map((e) => e.headers);
    expect(first!.host).toBe(new URL(sink.url).host);
    expect(second!.host).toBe("events.example");
    for (const headers of [first!, second!]) {
      expect(headers["content-length"]).toBe(String(body.byteLength));
      expect(headers["x-tags"]).toBe("a, b");
      expect(headers["content-type"]).toBe(EVENTS_MEDIA_TYPE);
    }
  });
});
