/**
 * The notifier's delivery side: while this process holds the lease, each
 * endpoint's queue is read in key order and sent in envelopes of up to its
 * batch limit; an object is deleted once the endpoint accepted all its
 * events. When the queue in storage is empty, the pulls still in memory are
 * sent from there (never written if the endpoint takes them). A failing
 * endpoint is retried, backing off after `threshold` failures in a row.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import type { StorageDriver } from "../storage/driver.js";
import { readAll } from "../util/streams.js";
import { DeliveryError, post, type WebhookPost } from "./endpoint.js";
import type { EndpointState } from "./endpoint-state.js";
import type { Lease } from "./lease.js";
import { decodeLines, envelope, type LineRange, type ObjectLines } from "./outbox-format.js";
import type { OutboxWriter } from "./outbox-writer.js";
import type { WrittenObjects } from "./written-objects.js";

/**
 * An empty queue is listed again after this long at the most, unless this process wrote to it since: a delivery
 * pass runs for every full batch of pulls (forty a second on a busy registry), and listing an empty directory of
 * the fs driver costs as much as a thousand pulls' recording. What another process writes is found this much later.
 */
const RELIST_EMPTY_MS = 250;
/** Most keys listed from a queue in one pass. */
const LIST_LIMIT = 1000;
/** Largest outbox object read back (a batch of pulls is far smaller). */
const MAX_OBJECT = 16 * 1024 * 1024;
const NO_LINES: ObjectLines = { bytes: new Uint8Array(0), starts: [], ends: [] };

/** What an {@link OutboxDelivery} reads, sends and deletes with. */
export interface OutboxDeliveryOptions {
  storage: StorageDriver;
  states: readonly EndpointState[];
  lease: Lease;
  /** What this process wrote, kept for its own delivery while it holds the lease. */
  written: WrittenObjects;
  writer: OutboxWriter;
  send: WebhookPost | undefined;
  log: LogHook;
  pullFlushMs: number;
  pollMs: number;
}

/** An outbox object being sent: its lines, and how many of them were put into envelopes so far. */
interface OpenObject {
  key: string;
  lines: ObjectLines;
  at: number;
}

/** The delivery side of the outbox (see the module comment); its state is in the endpoints' states. */
export class OutboxDelivery {
  readonly #o: OutboxDeliveryOptions;

  constructor(options: OutboxDeliveryOptions) {
    this.#o = options;
  }

  /** One pass over every endpoint, if this process holds (or takes) the lease; resolves to the events sent. */
  async deliverOnce(): Promise<number> {
    const { lease, states, written } = this.#o;
    if (!(await lease.acquire())) {
      written.clear();
      // Another process delivers meanwhile: what this one knew of the queues is not kept past it.
      for (const state of states) state.emptyQueue = undefined;
      return 0;
    }
    let sent = 0;
    for (const state of states) sent += await this.#deliverTo(state);
    return sent;
  }

  /** Until the next pass after one that sent nothing: the poll interval, or until pulls in memory are due. */
  idleWait(): number {
    const { lease, states, pollMs, pullFlushMs } = this.#o;
    if (!lease.held) return pollMs;
    let wait = pollMs;
    for (const { buffer } of states) if (buffer.count > 0) wait = Math.min(wait, Math.max(0, buffer.since + pullFlushMs / 2 - Date.now()));
    return wait;
  }

  /**
   * Send what is queued for `state`'s endpoint, oldest first, in envelopes of
   * up to `state.batchLimit` events; an object is deleted once all its events
   * were accepted. Resolves to the events sent.
   */
  async #deliverTo(state: EndpointState): Promise<number> {
    if (Date.now() < state.resumeAt) return 0;
    const { writer, lease, storage, written } = this.#o;
    // Every write started so far is in the listing, so pulls still in memory come after all it holds.
    await writer.writing;
    const listedAfter = writer.writesStarted;
    const keys = await this.#list(state, listedAfter);
    const cursor = { next: 0, object: undefined as OpenObject | undefined };
    let sent = 0;
    while (lease.held) {
      const { batch, events, emptied } = await this.#nextBatch(state, keys, cursor);
      if (events === 0 && emptied.length === 0) break;
      if (events > 0) {
        try {
          await post(state.endpoint, envelope(batch), this.#o.send);
        } catch (error) {
          this.#failed(state, events, error);
          return sent;
        }
      }
      state.failures = 0;
      sent += events;
      // Lines of an object cut between envelopes are not sent again by this process.
      state.progress = cursor.object === undefined ? undefined : { key: cursor.object.key, at: cursor.object.at };
      for (const key of emptied) {
        await storage.delete(key);
        written.forget(key);
      }
    }
    const queueSent = lease.held && keys.length < LIST_LIMIT && cursor.next >= keys.length && cursor.object === undefined && writer.writesStarted === listedAfter;
    return queueSent ? sent + (await this.#deliverBuffered(state)) : sent;
  }

  /** The keys queued for `state`'s endpoint; none without a listing when it was found empty a moment ago and nothing was written since. */
  async #list(state: EndpointState, listedAfter: number): Promise<string[]> {
    const now = Date.now();
    const empty = state.emptyQueue;
    if (empty !== undefined && empty.writes === listedAfter && now - empty.at < RELIST_EMPTY_MS) return [];
    const { keys } = await this.#o.storage.list(state.queue, { limit: LIST_LIMIT });
    state.emptyQueue = keys.length === 0 ? { at: now, writes: listedAfter } : undefined;
    return keys;
  }

  /** The next envelope's lines from the queued `keys`, from where `cursor` stands, and the objects it finishes. */
  async #nextBatch(state: EndpointState, keys: readonly string[], cursor: { next: number; object: OpenObject | undefined }): Promise<{ batch: LineRange[]; events: number; emptied: string[] }> {
    const batch: LineRange[] = [];
    const emptied: string[] = [];
    let events = 0;
    while (events < state.batchLimit) {
      if (cursor.object === undefined) {
        if (cursor.next >= keys.length) break;
        const key = keys[cursor.next++]!;
        cursor.object = { key, lines: await this.#readLines(key), at: state.progress?.key === key ? state.progress.at : 0 };
      }
      const object = cursor.object;
      const count = object.lines.starts.length;
      const end = Math.min(count, object.at + state.batchLimit - events);
      if (end > object.at) batch.push({ lines: object.lines, from: object.at, to: end });
      events += Math.max(0, end - object.at);
      object.at = end;
      if (end >= count) {
        emptied.push(object.key);
        cursor.object = undefined;
      }
    }
    return { batch, events, emptied };
  }

  /** The event lines of the outbox object `key` (none when it is gone or unreadable). */
  async #readLines(key: string): Promise<ObjectLines> {
    const kept = this.#o.written.get(key);
    if (kept !== undefined) return kept;
    const { storage, log } = this.#o;
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
  }

  /**
   * How many of `state`'s pulls in memory are due for delivery from there:
   * all once the oldest has waited half the flush bound, else whole batches.
   */
  #due(state: EndpointState, now: number): number {
    const count = state.buffer.count;
    if (count === 0 || now - state.buffer.since >= this.#o.pullFlushMs / 2) return count;
    return count - (count % state.batchLimit);
  }

  /**
   * Send `state`'s due pulls from memory (its queue in storage is empty): they
   * are never written if the endpoint takes them. What it refuses is written
   * under a name drawn before any later write, so the queue keeps their order.
   */
  async #deliverBuffered(state: EndpointState): Promise<number> {
    const count = this.#due(state, Date.now());
    if (count === 0) return 0;
    const { writer, lease } = this.#o;
    const name = writer.nextName();
    const taken = state.buffer.takeFirst(count);
    if (writer.buffersEmpty()) writer.disarmFlush();
    let sent = 0;
    while (sent < count) {
      const to = Math.min(count, sent + state.batchLimit);
      try {
        if (!lease.held) throw new Error("delivery lease lost");
        await post(state.endpoint, taken.envelope(sent, to), this.#o.send);
      } catch (error) {
        this.#failed(state, to - sent, error);
        // With the ids they were sent with: the endpoint may have taken the batch it did not acknowledge.
        await writer.writeRest(`${state.queue}/${name}`, taken.lines(sent, count).bytes, count - sent);
        return sent;
      }
      state.failures = 0;
      sent = to;
    }
    return sent;
  }

  /** A delivery of `events` failed: smaller envelopes after a 413, else a failure counted towards the backoff. */
  #failed(state: EndpointState, events: number, error: unknown): void {
    const log = this.#o.log;
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
  }
}
