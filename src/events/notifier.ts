/**
 * Webhook notifications through a durable outbox.
 *
 * `record` writes each event, before the request that caused it is answered,
 * into the queue of every endpoint that takes it: objects
 * `<prefix>/outbox/<endpoint>/<time>-<seq>-<process>-<n>` holding a batch of
 * events. Push, mount and delete are written at once; pulls (the bulk of the
 * traffic) wait in memory for at most `pullFlushMs` and go with the next
 * write, so a crash loses at most that much of the pulls and nothing else.
 * The delivering process sends its own waiting pulls from memory once a
 * batch is full or half that time has passed, when nothing is queued before
 * them: pulls accepted by the endpoint within the bound are never written.
 * One process at a time (see lease.ts) reads each queue in key order, POSTs
 * envelopes, deletes what the endpoint accepted, and retries a failing
 * endpoint until it answers (backing off after `threshold` failures in a
 * row). After a crash or restart, whatever is still queued is sent again: at
 * least once, in the order of each process's events.
 *
 * @module
 */
import { silent } from "../http/log.js";
import { readAll } from "../util/streams.js";
import { DeliveryError, post, resolveEndpoint, takes, type ResolvedEndpoint } from "./endpoint.js";
import { AWAITED, RECORDED, RECORD_PARTS, type EventParts, type PartsSink } from "./hook.js";
import { Lease } from "./lease.js";
import type { Notifier, NotifierOptions } from "./notifier-options.js";
import { PassLoop } from "./pass-loop.js";
import type { EventAction, EventSource, RegistryEvent } from "./model.js";
import { eventRequestParts } from "./request.js";
import { EventLines } from "./event-json.js";
import { decodeLines, envelope, type LineRange, type ObjectLines } from "./outbox-format.js";
import { PendingEvents } from "./pending-events.js";
import { WrittenObjects } from "./written-objects.js";

interface EndpointState {
  endpoint: ResolvedEndpoint;
  /** Events for this endpoint waiting in memory (pulls), as their parts. */
  buffer: PendingEvents;
  failures: number;
  resumeAt: number;
  /** Most events in one envelope to this endpoint: `maxBatch`, halved after each 413 answer. */
  batchLimit: number;
  /** The events of the first queued object that this process already delivered (it was cut between envelopes). */
  progress?: { key: string; at: number };
  /** When a listing last found the queue empty, and how many writes this process had started then (see {@link RELIST_EMPTY_MS}). */
  emptyQueue?: { at: number; writes: number };
}

/**
 * An empty queue is listed again after this long at the most, unless this process wrote to it since: a delivery
 * pass runs for every full batch of pulls (forty a second on a busy registry), and listing an empty directory of
 * the fs driver costs as much as a thousand pulls' recording. What another process writes is found this much later.
 */
const RELIST_EMPTY_MS = 250;

/** Largest outbox object read back (a batch of pulls is far smaller). */
const MAX_OBJECT = 16 * 1024 * 1024;
/** This process's id in outbox keys and the lease, drawn on first use: workerd refuses random values at module scope. */
let processId: string | undefined;
const PROCESS = (): string => (processId ??= crypto.randomUUID().slice(0, 8));
/**
 * Notifiers made in this process so far. Each writes under its own `<process>-<n>`: two notifiers of one process
 * on one store (two registries in a server) would otherwise draw the same key in the same millisecond, and the
 * later write would replace the earlier one's events.
 */
let notifiersMade = 0;
/**
 * Bytes of pull events held in memory before they are written anyway (bounds memory; about 6000 pulls). A write
 * costs about the same for 1 and 6000 events (an fsync, a listing, a delete), so it carries as many as the time
 * bound lets it.
 */
const PULL_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Most bytes of outbox objects this process wrote and keeps in memory for its own delivery (it need not read
 * back what it just wrote) while it holds the lease.
 */
const KEEP_WRITTEN_BYTES = 16 * 1024 * 1024;
const NO_LINES: ObjectLines = { bytes: new Uint8Array(0), starts: [], ends: [] };

export type { Notifier, NotifierOptions };

/** Create the outbox sink; give it to `onEvent` and call `start()`. */
export function createNotifier(options: NotifierOptions): Notifier {
  const storage = options.storage;
  const prefix = options.prefix ?? "_events";
  const log = options.log ?? silent;
  const maxBatch = options.maxBatch ?? 1000;
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new TypeError("notifications maxBatch must be a whole number >= 1");
  const pollMs = options.pollMs ?? 1000;
  const pullFlushMs = options.pullFlushMs ?? 1000;
  const includeReferences = options.includeReferences ?? false;
  const send = options.post;
  const endpoints = options.endpoints.map(resolveEndpoint);
  const names = new Set<string>();
  for (const e of endpoints) {
    if (names.has(e.name)) throw new TypeError(`notifications endpoint ${JSON.stringify(e.name)} is configured twice`);
    names.add(e.name);
  }
  const active = endpoints.filter((e) => !e.disabled);
  const states: EndpointState[] = active.map((endpoint) => ({ endpoint, buffer: new PendingEvents(), failures: 0, resumeAt: 0, batchLimit: maxBatch }));
  const queue = (endpoint: ResolvedEndpoint) => `${prefix}/outbox/${endpoint.name}`;
  const writer = `${PROCESS()}-${++notifiersMade}`;
  const lease = new Lease(storage, prefix, writer, { durationMs: options.leaseMs ?? 10_000, skewMs: 2_000 });

  let seq = 0;
  let lastMs = 0;
  const nextName = (): string => {
    const now = Math.max(Date.now(), lastMs);
    if (now !== lastMs) seq = 0;
    lastMs = now;
    seq += 1;
    return `${String(now).padStart(15, "0")}-${String(seq).padStart(9, "0")}-${writer}`;
  };

  // Pulls wait here as their parts, one list per endpoint; any durable write takes them along first, so the
  // order of one process holds.
  const lines = new EventLines(includeReferences);
  const buffered = states.map((state) => state.buffer);
  let bufferedPulls = 0;
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();
  /** Writes of buffered events started so far: delivery from memory must not pass one it has not listed. */
  let writesStarted = 0;
  // What this process wrote, by key, for its own delivery pass: only while it holds the lease (another holder
  // would deliver and delete those objects), and dropped once delivered.
  const written = new WrittenObjects(KEEP_WRITTEN_BYTES);
  /** The buffers were emptied: no flush is due until the next pull. */
  const disarmFlush = (): void => {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    bufferedPulls = 0;
  };
  /** Run `work` after every write chained before it; writes keep the order in which they were started. */
  const chained = (work: () => Promise<unknown>): Promise<void> => {
    const done = writing.then(work).then(() => {});
    writing = done.catch(() => {});
    return done;
  };
  /** Write what is buffered now, as one object per endpoint; writes are chained so keys and contents follow the order of `record` calls. */
  const writeBuffered = (): Promise<void> => {
    disarmFlush();
    writesStarted++;
    const name = nextName();
    const writes = states.map((state, i) => (buffered[i]!.count === 0 ? undefined : { key: `${queue(state.endpoint)}/${name}`, lines: buffered[i]!.take().lines() }));
    return chained(() => Promise.all(writes.map(async (w) => {
      if (!w) return;
      await storage.write(w.key, w.lines.bytes);
      if (lease.held) written.keep(w.key, w.lines);
    })));
  };
  const flush = (): Promise<void> => {
    if (buffered.every((b) => b.count === 0)) return writing;
    const count = bufferedPulls;
    return writeBuffered().catch((error) => log({ level: "error", msg: "event outbox write failed: pull events lost", count, error: String(error) }));
  };

  /** The first endpoint that takes an event, or -1. */
  const firstTaker = (action: EventAction, mediaType: string | undefined): number => {
    for (let i = 0; i < states.length; i++) if (takes(states[i]!.endpoint, action, mediaType)) return i;
    return -1;
  };
  /** The event just added to the buffer of endpoint `first` goes to every later one that takes it too, with the same ids. */
  const copyToOthers = (first: number, action: EventAction, mediaType: string | undefined): void => {
    const from = buffered[first]!;
    for (let i = first + 1; i < states.length; i++) if (takes(states[i]!.endpoint, action, mediaType)) buffered[i]!.addCopy(from, from.count - 1);
  };
  /** An event is in the buffers: write it now, or (a pull) with the next write. */
  const buffer = (action: EventAction): Promise<void> => {
    if (action !== "pull") return writeBuffered();
    bufferedPulls += 1;
    if (buffered.some((b) => b.size >= PULL_BUFFER_BYTES)) void flush();
    else flushTimer ??= setTimeout(() => void flush(), pullFlushMs);
    // A full batch wakes a waiting delivery loop (cheapest test first: this runs for every pull).
    if (states.some((state) => state.buffer.count >= state.batchLimit) && loop.idle && lease.held) loop.wake();
    return RECORDED;
  };

  const record = (event: RegistryEvent): Promise<void> => {
    try {
      const first = firstTaker(event.action, event.target.mediaType);
      if (first < 0) return RECORDED;
      lines.add(buffered[first]!, event);
      copyToOthers(first, event.action, event.target.mediaType);
      return buffer(event.action);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** `record` for an event given by its parts (see `RECORD_PARTS`): no event object, its ids drawn here. */
  const recordParts = (parts: EventParts, source: EventSource, request: Request | undefined): Promise<void> => {
    try {
      const { action, target } = parts;
      const first = firstTaker(action, target.mediaType);
      if (first < 0) return RECORDED;
      lines.addParts(buffered[first]!, action, target, parts.actor, source, request ? eventRequestParts(request, action) : undefined);
      copyToOthers(first, action, target.mediaType);
      return buffer(action);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** The event lines of the outbox object `key` (none when it is gone or unreadable). */
  const readLines = async (key: string): Promise<ObjectLines> => {
    const kept = written.get(key);
    if (kept !== undefined) return kept;
    const stream = await storage.read(key);
    if (!stream) return NO_LINES;
    try {
      const read = decodeLines(await readAll(stream, MAX_OBJECT));
      if (read.skipped > 0) log({ level: "error", msg: "unreadable event outbox lines skipped", key, count: read.skipped });
      return read;
    } catch (error) {
      log({ level: "error", msg: "unreadable event outbox object skipped", key, error: String(error) });
      return NO_LINES;
    }
  };

  /**
   * Send what is queued for `state`'s endpoint, oldest first, in envelopes of
   * up to `state.batchLimit` events; an object is deleted once all its events
   * were accepted. Resolves to the events sent.
   */
  const deliverTo = async (state: EndpointState): Promise<number> => {
    if (Date.now() < state.resumeAt) return 0;
    // Every write started so far is in the listing, so pulls still in memory come after all it holds.
    await writing;
    const listedAfter = writesStarted;
    const now = Date.now();
    const empty = state.emptyQueue;
    const knownEmpty = empty !== undefined && empty.writes === listedAfter && now - empty.at < RELIST_EMPTY_MS;
    const keys = knownEmpty ? [] : (await storage.list(queue(state.endpoint), { limit: 1000 })).keys;
    if (!knownEmpty) state.emptyQueue = keys.length === 0 ? { at: now, writes: listedAfter } : undefined;
    let sent = 0;
    let next = 0;
    let object: { key: string; lines: ObjectLines; at: number } | undefined;
    while (lease.held) {
      const batch: LineRange[] = [];
      let events = 0;
      const emptied: string[] = [];
      while (events < state.batchLimit) {
        if (object === undefined) {
          if (next >= keys.length) break;
          const key = keys[next++]!;
          object = { key, lines: await readLines(key), at: state.progress?.key === key ? state.progress.at : 0 };
        }
        const count = object.lines.starts.length;
        const end = Math.min(count, object.at + state.batchLimit - events);
        if (end > object.at) batch.push({ lines: object.lines, from: object.at, to: end });
        events += Math.max(0, end - object.at);
        object.at = end;
        if (end >= count) {
          emptied.push(object.key);
          object = undefined;
        }
      }
      if (events === 0 && emptied.length === 0) break;
      if (events > 0) {
        try {
          await post(state.endpoint, envelope(batch), send);
        } catch (error) {
          failedDelivery(state, events, error);
          return sent;
        }
      }
      state.failures = 0;
      sent += events;
      // Lines of an object cut between envelopes are not sent again by this process.
      state.progress = object === undefined ? undefined : { key: object.key, at: object.at };
      for (const key of emptied) {
        await storage.delete(key);
        written.forget(key);
      }
    }
    const queueSent = lease.held && keys.length < 1000 && next >= keys.length && object === undefined && writesStarted === listedAfter;
    return queueSent ? sent + (await deliverBuffered(state)) : sent;
  };

  /**
   * How many of `state`'s pulls in memory are due for delivery from there:
   * all once the oldest has waited half the flush bound, else whole batches.
   */
  const due = (state: EndpointState, now: number): number => {
    const count = state.buffer.count;
    if (count === 0 || now - state.buffer.since >= pullFlushMs / 2) return count;
    return count - (count % state.batchLimit);
  };

  /**
   * Send `state`'s due pulls from memory (its queue in storage is empty): they
   * are never written if the endpoint takes them. What it refuses is written
   * under a name drawn before any later write, so the queue keeps their order.
   */
  const deliverBuffered = async (state: EndpointState): Promise<number> => {
    const count = due(state, Date.now());
    if (count === 0) return 0;
    const name = nextName();
    const taken = state.buffer.takeFirst(count);
    if (buffered.every((b) => b.count === 0)) disarmFlush();
    let sent = 0;
    while (sent < count) {
      const to = Math.min(count, sent + state.batchLimit);
      try {
        if (!lease.held) throw new Error("delivery lease lost");
        await post(state.endpoint, taken.envelope(sent, to), send);
      } catch (error) {
        failedDelivery(state, to - sent, error);
        // With the ids they were sent with: the endpoint may have taken the batch it did not acknowledge.
        await writeRest(`${queue(state.endpoint)}/${name}`, taken.lines(sent, count).bytes, count - sent);
        return sent;
      }
      state.failures = 0;
      sent = to;
    }
    return sent;
  };

  /** Write pulls that delivery from memory could not send, into their place in the queue. */
  const writeRest = async (key: string, bytes: Uint8Array, count: number): Promise<void> => {
    writesStarted++;
    await chained(() => storage.write(key, bytes)).catch((error) => log({ level: "error", msg: "event outbox write failed: pull events lost", count, error: String(error) }));
  };

  const failedDelivery = (state: EndpointState, events: number, error: unknown): void => {
    // An endpoint that finds the envelope too large gets smaller ones from now on.
    if (error instanceof DeliveryError && error.status === 413 && events > 1) {
      state.batchLimit = Math.max(1, Math.floor(events / 2));
      log({ level: "warn", msg: "event endpoint refused the envelope as too large; sending smaller ones", endpoint: state.endpoint.name, events, next: state.batchLimit });
      return;
    }
    state.failures += 1;
    if (state.failures >= state.endpoint.threshold) {
      state.resumeAt = Date.now() + state.endpoint.backoffMs;
      state.failures = 0;
    }
    log({ level: "warn", msg: "event delivery failed; will retry", endpoint: state.endpoint.name, events, error: (error as Error).message });
  };

  const deliverOnce = async (): Promise<number> => {
    if (!(await lease.acquire())) {
      written.clear();
      // Another process delivers meanwhile: what this one knew of the queues is not kept past it.
      for (const state of states) state.emptyQueue = undefined;
      return 0;
    }
    let sent = 0;
    for (const state of states) sent += await deliverTo(state);
    return sent;
  };

  /** Until the next pass after one that sent nothing: the poll interval, or until pulls in memory are due. */
  const idleWait = (): number => {
    if (!lease.held) return pollMs;
    let wait = pollMs;
    for (const { buffer } of states) if (buffer.count > 0) wait = Math.min(wait, Math.max(0, buffer.since + pullFlushMs / 2 - Date.now()));
    return wait;
  };
  const loop = new PassLoop(deliverOnce, idleWait, log);

  const notifier: Notifier & PartsSink & { readonly [AWAITED]: true } = {
    record,
    [RECORD_PARTS]: recordParts,
    // Push, mount and delete are written before the response: the service waits for this sink.
    [AWAITED]: true,
    flush,
    deliverOnce,
    start: () => loop.start(),
    async close() {
      const stopped = loop.stop();
      await flush();
      await stopped;
      await lease.release().catch(() => {});
    },
  };
  return notifier;
}
