/**
 * Issue 41, item 7: an in-process sink (`onEvent: { record }`) is fed off the
 * request path, through a bounded queue, in order; a failing listener or sink
 * is reported on the console when the service has no `log`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EventSink, RegistryEvent } from "../../src/events/index.js";
import { eventEmitter } from "../../src/events/hook.js";
import { silent, type LogEvent } from "../../src/http/log.js";
import { makeRegistry, pushBlob, pushImage, req } from "../registry/helpers.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await sleep(5);
  expect(check()).toBe(true);
}

/** Milliseconds `work` takes. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

const label = (e: RegistryEvent): string => `${e.action} ${e.target.digest ?? e.target.repository}`;

afterEach(() => vi.restoreAllMocks());

describe("an in-process sink is off the request path", () => {
  it("a sink taking 2 s per event slows neither a push nor a manifest GET, and still gets every event, in order", async () => {
    const received: string[] = [];
    let slow = true;
    let calls = 0;
    let inCall = 0;
    let overlapped = false;
    const sink: EventSink = {
      async record(event) {
        calls += 1;
        overlapped ||= ++inCall > 1;
        if (slow) await sleep(2000);
        inCall -= 1;
        received.push(label(event));
      },
    };
    const registry = makeRegistry({ onEvent: sink });
    let image!: Awaited<ReturnType<typeof pushImage>>;
    // Six events (two upload.started, repository.created, three push): 12 s when each is awaited.
    const pushMs = await timed(async () => (image = await pushImage(registry, "team/app", "v1")));
    expect(pushMs).toBeLessThan(500);
    for (const path of ["/v2/team/app/manifests/v1", "/v2/team/app/manifests/v1", `/v2/team/app/blobs/${image.layer}`]) {
      const ms = await timed(async () => {
        const response = await registry(req("GET", path));
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      });
      expect(ms).toBeLessThan(500);
    }
    // The sink is still in its first call: one at a time, in order.
    expect(calls).toBe(1);
    expect(received).toEqual([]);
    slow = false;
    await until(() => received.length === 9);
    expect(received).toEqual([
      "upload.started team/app",
      "repository.created team/app",
      `push ${image.config}`,
      "upload.started team/app",
      `push ${image.layer}`,
      `push ${image.digest}`,
      `pull ${image.digest}`,
      `pull ${image.digest}`,
      `pull ${image.layer}`,
    ]);
    expect(overlapped).toBe(false);
  }, 20_000);

  it("a sink that fails on one event is logged and still gets the next ones", async () => {
    const logged: LogEvent[] = [];
    const received: string[] = [];
    const sink: EventSink = {
      record: async (event) => {
        if (event.action === "repository.created") throw new Error("sink bug");
        received.push(event.action);
      },
    };
    const registry = makeRegistry({ log: (e) => void logged.push(e), onEvent: sink });
    await pushBlob(registry, "x", "hello");
    await until(() => received.length === 2);
    expect(received).toEqual(["upload.started", "push"]);
    expect(logged.filter((e) => e.msg === "event sink failed: the event is lost").map((e) => [e.action, e.error])).toEqual([["repository.created", "sink bug"]]);
  });

  it("a full queue drops the oldest waiting events, says so at once, and never holds up the emitter", async () => {
    const logged: LogEvent[] = [];
    const received: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const sink: EventSink = {
      async record(event) {
        if (event.target.repository === "r0") await released;
        received.push(event.target.repository!);
      },
    };
    const emit = eventEmitter({ onEvent: sink, log: (e) => void logged.push(e), sinkQueueLimit: 3 });
    const within = async (promise: Promise<void>): Promise<boolean> => Promise.race([promise.then(() => true), sleep(200).then(() => false)]);
    expect(await within(emit(undefined, { action: "push", target: { repository: "r0" } }))).toBe(true);
    await until(() => received.length === 0 && logged.length === 0);
    await sleep(20); // the sink now holds r0
    for (let i = 1; i < 10; i++) expect(await within(emit(undefined, { action: "push", target: { repository: `r${i}` } }))).toBe(true);
    const drops = (): LogEvent[] => logged.filter((e) => e.msg === "event sink queue full: oldest events dropped");
    // The first drop is reported as it happens, while the sink is still stuck.
    expect(drops()).toEqual([{ level: "error", msg: "event sink queue full: oldest events dropped", dropped: 1, limit: 3 }]);
    release();
    await until(() => received.length === 4);
    expect(received).toEqual(["r0", "r7", "r8", "r9"]);
    // The rest of the drops are reported once the sink caught up.
    await until(() => drops().length === 2);
    expect(drops().reduce((n, e) => n + (e.dropped as number), 0)).toBe(6);
  });
});

describe("failures without a log hook", () => {
  it("a throwing listener is reported on the console when the service has no log (once, not per event)", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const registry = makeRegistry({
      onEvent: () => {
        throw new Error("listener bug");
      },
    });
    await pushBlob(registry, "x", "hello");
    await until(() => error.mock.calls.length > 0);
    await sleep(50);
    expect(error).toHaveBeenCalledTimes(1);
    expect(String(error.mock.calls[0]![0])).toMatch(/event listener failed.*listener bug/);
  });

  it("a rejecting sink is reported on the console when the service has no log", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const registry = makeRegistry({ onEvent: { record: () => Promise.reject(new Error("disk gone")) } });
    await pushBlob(registry, "x", "hello");
    await until(() => error.mock.calls.length > 0);
    expect(String(error.mock.calls[0]![0])).toMatch(/event sink failed: the event is lost.*disk gone/);
  });

  it("a service given a log hook reports there and not on the console", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const logged: LogEvent[] = [];
    const registry = makeRegistry({
      log: (e) => void logged.push(e),
      onEvent: () => {
        throw new Error("listener bug");
      },
    });
    await pushBlob(registry, "x", "hello");
    await until(() => logged.some((e) => e.msg === "event listener failed"));
    expect(error).not.toHaveBeenCalled();
    expect(silent).toBeTypeOf("function");
  });
});
