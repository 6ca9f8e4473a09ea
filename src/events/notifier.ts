/**
 * Webhook notifications through a durable outbox.
 *
 * `record` writes each event, before the request that caused it is answered,
 * into the queue of every endpoint that takes it: objects
 * `<prefix>/outbox/<endpoint>/<time>-<seq>-<process>` holding a batch of
 * events. Push, mount and delete are written at once; pulls (the bulk of the
 * traffic) wait in memory for at most `pullFlushMs` and go with the next
 * write, so a crash loses at most that much of the pulls and nothing else.
 * One process at a time (see lease.ts) reads each queue in key order, POSTs
 * envelopes, deletes what the endpoint accepted, and retries a failing
 * endpoint until it answers (backing off after `threshold` failures in a
 * row). After a crash or restart, whatever is still queued is sent again: at
 * least once, in the order of each process's events.
 *
 * @module
 */
import { silent, type LogHook } from "../http/log.js";
import type { StorageDriver } from "../storage/driver.js";
import { readAll } from "../util/streams.js";
import { post, resolveEndpoint, wants, type ResolvedEndpoint, type WebhookEndpoint } from "./endpoint.js";
import type { EventSink } from "./hook.js";
import { Lease } from "./lease.js";
import type { RegistryEvent } from "./model.js";

/** Options of {@link createNotifier}. */
export interface NotifierOptions {
  /** Where the outbox lives; processes that share it deliver together (one at a time). */
  storage: StorageDriver;
  /** The webhook endpoints. */
  endpoints: readonly WebhookEndpoint[];
  /** Send `target.references` of manifest events (`notifications.events.includereferences`). Default false. */
  includeReferences?: boolean;
  /** Key prefix of the outbox. Default `_events` (outside the registry's `docker/…` layout). */
  prefix?: string;
  /** Longest time a pull event waits in memory before it is written; what a crash can lose. Default 1000 ms. */
  pullFlushMs?: number;
  /** Most events in one envelope. Default 100. */
  maxBatch?: number;
  /** How often the outbox is polled when idle, in milliseconds. Default 1000. */
  pollMs?: number;
  /**
   * The delivery lease's duration, in milliseconds. Default 10000. After a
   * crash, another process (or the restarted one) takes over delivery once it
   * has run out (plus 2 s for clock skew).
   */
  leaseMs?: number;
  /** Receives delivery failures (`warn`) and storage failures (`error`). */
  log?: LogHook;
}

/** The outbox and its delivery loop. */
export interface Notifier extends EventSink {
  /** Start delivering (idempotent). Without it, events are only recorded. */
  start(): void;
  /** Write buffered pulls, stop delivering, give up the lease. */
  close(): Promise<void>;
  /** Write buffered pull events now. */
  flush(): Promise<void>;
  /** Run one delivery pass now (tests, `gc`-like tools); resolves to the events sent. */
  deliverOnce(): Promise<number>;
}

interface EndpointState {
  endpoint: ResolvedEndpoint;
  failures: number;
  resumeAt: number;
}

/** Largest outbox object read back (a batch of pulls is far smaller). */
const MAX_OBJECT = 16 * 1024 * 1024;
/** This process's id in outbox keys and the lease, drawn on first use: workerd refuses random values at module scope. */
let processId: string | undefined;
const PROCESS = (): string => (processId ??= crypto.randomUUID().slice(0, 8));
/** Pull events held in memory before they are written anyway (bounds memory; about 0.5 MiB). */
const PULL_BUFFER = 1000;

/** Create the outbox sink; give it to `onEvent` and call `start()`. */
export function createNotifier(options: NotifierOptions): Notifier {
  const storage = options.storage;
  const prefix = options.prefix ?? "_events";
  const log = options.log ?? silent;
  const maxBatch = options.maxBatch ?? 100;
  const pollMs = options.pollMs ?? 1000;
  const pullFlushMs = options.pullFlushMs ?? 1000;
  const includeReferences = options.includeReferences ?? false;
  const endpoints = options.endpoints.map(resolveEndpoint);
  const names = new Set<string>();
  for (const e of endpoints) {
    if (names.has(e.name)) throw new TypeError(`notifications endpoint ${JSON.stringify(e.name)} is configured twice`);
    names.add(e.name);
  }
  const active = endpoints.filter((e) => !e.disabled);
  const states: EndpointState[] = active.map((endpoint) => ({ endpoint, failures: 0, resumeAt: 0 }));
  const queue = (endpoint: ResolvedEndpoint) => `${prefix}/outbox/${endpoint.name}`;
  const lease = new Lease(storage, prefix, PROCESS(), { durationMs: options.leaseMs ?? 10_000, skewMs: 2_000 });

  let seq = 0;
  let lastMs = 0;
  const nextName = (): string => {
    const now = Math.max(Date.now(), lastMs);
    if (now !== lastMs) seq = 0;
    lastMs = now;
    seq += 1;
    return `${String(now).padStart(15, "0")}-${String(seq).padStart(9, "0")}-${PROCESS()}`;
  };

  // Pulls wait here; any durable write takes them along first, so the order of one process holds.
  let buffered: RegistryEvent[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();
  const write = (events: RegistryEvent[]): Promise<void> => {
    // Writes are chained so keys and contents follow the order of `record` calls.
    const name = nextName();
    const writes = states.map((state) => {
      const taken = events.filter((event) => wants(state.endpoint, event));
      return taken.length === 0 ? undefined : { key: `${queue(state.endpoint)}/${name}`, body: new TextEncoder().encode(JSON.stringify(taken)) };
    });
    const done = writing.then(() => Promise.all(writes.map((w) => w && storage.write(w.key, w.body)))).then(() => {});
    writing = done.catch(() => {});
    return done;
  };
  const flush = (): Promise<void> => {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    if (buffered.length === 0) return writing;
    const events = buffered;
    buffered = [];
    return write(events).catch((error) => log({ level: "error", msg: "event outbox write failed: pull events lost", count: events.length, error: String(error) }));
  };

  const trim = (event: RegistryEvent): RegistryEvent => {
    if (includeReferences || event.target.references === undefined) return event;
    const { references: _dropped, ...target } = event.target;
    return { ...event, target };
  };

  const record = async (event: RegistryEvent): Promise<void> => {
    if (!active.some((s) => wants(s, event))) return;
    const kept = trim(event);
    if (event.action === "pull") {
      buffered.push(kept);
      if (buffered.length >= PULL_BUFFER) void flush();
      else flushTimer ??= setTimeout(() => void flush(), pullFlushMs);
      return;
    }
    const events = [...buffered, kept];
    buffered = [];
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    await write(events);
  };

  const readObject = async (key: string): Promise<RegistryEvent[]> => {
    const stream = await storage.read(key);
    if (!stream) return [];
    try {
      return JSON.parse(new TextDecoder().decode(await readAll(stream, MAX_OBJECT))) as RegistryEvent[];
    } catch (error) {
      log({ level: "error", msg: "unreadable event outbox object skipped", key, error: String(error) });
      return [];
    }
  };

  /** Send what is queued for `state`'s endpoint, oldest first; resolves to the events sent. */
  const deliverTo = async (state: EndpointState): Promise<number> => {
    if (Date.now() < state.resumeAt) return 0;
    const { keys } = await storage.list(queue(state.endpoint), { limit: 1000 });
    let sent = 0;
    let i = 0;
    while (i < keys.length && lease.held) {
      const batch: RegistryEvent[] = [];
      const taken: string[] = [];
      for (; i < keys.length && batch.length < maxBatch; i++) {
        taken.push(keys[i]!);
        batch.push(...(await readObject(keys[i]!)));
      }
      if (batch.length > 0) {
        try {
          await post(state.endpoint, batch);
        } catch (error) {
          state.failures += 1;
          if (state.failures >= state.endpoint.threshold) {
            state.resumeAt = Date.now() + state.endpoint.backoffMs;
            state.failures = 0;
          }
          log({ level: "warn", msg: "event delivery failed; will retry", endpoint: state.endpoint.name, events: batch.length, error: (error as Error).message });
          return sent;
        }
      }
      state.failures = 0;
      sent += batch.length;
      for (const key of taken) await storage.delete(key);
    }
    return sent;
  };

  const deliverOnce = async (): Promise<number> => {
    if (!(await lease.acquire())) return 0;
    let sent = 0;
    for (const state of states) sent += await deliverTo(state);
    return sent;
  };

  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pass: Promise<unknown> = Promise.resolve();
  const loop = (): void => {
    timer = undefined;
    if (!running) return;
    pass = deliverOnce()
      .catch((error) => log({ level: "error", msg: "event delivery pass failed", error: String(error) }))
      .then((sent) => {
        if (running) timer = setTimeout(loop, typeof sent === "number" && sent > 0 ? 0 : pollMs);
      });
  };

  return {
    record,
    flush,
    deliverOnce,
    start() {
      if (running) return;
      running = true;
      loop();
    },
    async close() {
      running = false;
      if (timer) clearTimeout(timer);
      await flush();
      await pass;
      await lease.release().catch(() => {});
    },
  };
}
