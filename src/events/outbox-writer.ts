/**
 * The notifier's write side: `record` puts each event into the memory buffer
 * of every endpoint that takes it, then writes push, mount and delete at once
 * and lets pulls wait for at most `pullFlushMs` (or until the buffers hold
 * {@link PULL_BUFFER_BYTES}) to go with the next write. Writes are chained,
 * so the keys and contents of one process's outbox objects follow the order
 * of its `record` calls.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import type { StorageDriver } from "../storage/driver.js";
import { takes } from "./endpoint.js";
import type { EndpointState } from "./endpoint-state.js";
import type { EventLines } from "./event-json.js";
import { RECORDED, type EventParts } from "./hook.js";
import type { Lease } from "./lease.js";
import type { EventAction, EventSource, RegistryEvent } from "./model.js";
import { eventRequestParts } from "./request.js";
import type { WrittenObjects } from "./written-objects.js";

/**
 * Bytes of pull events held in memory before they are written anyway (bounds memory; about 6000 pulls). A write
 * costs about the same for 1 and 6000 events (an fsync, a listing, a delete), so it carries as many as the time
 * bound lets it.
 */
const PULL_BUFFER_BYTES = 4 * 1024 * 1024;

/** What an {@link OutboxWriter} writes with and into. */
export interface OutboxWriterOptions {
  storage: StorageDriver;
  /** This notifier's id in object names (`<process>-<n>`). */
  writer: string;
  /** The endpoints' states; the writer fills their buffers. */
  states: readonly EndpointState[];
  lines: EventLines;
  lease: Lease;
  /** What this process wrote, kept for its own delivery while it holds the lease. */
  written: WrittenObjects;
  log: LogHook;
  pullFlushMs: number;
  /** A full batch of pulls is in memory: wake the delivery loop if it waits. */
  wake: () => void;
}

/** The write side of the outbox (see the module comment); its state is its fields. */
export class OutboxWriter {
  /** Writes of buffered events started so far: delivery from memory must not pass one it has not listed. */
  writesStarted = 0;
  /** The end of the chain of writes started so far (it never rejects). */
  writing: Promise<void> = Promise.resolve();
  readonly #o: OutboxWriterOptions;
  #seq = 0;
  #lastMs = 0;
  #bufferedPulls = 0;
  #flushTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: OutboxWriterOptions) {
    this.#o = options;
  }

  /** The next object name: time, a sequence within the millisecond, the writer; later calls sort after earlier ones. */
  nextName(): string {
    const now = Math.max(Date.now(), this.#lastMs);
    if (now !== this.#lastMs) this.#seq = 0;
    this.#lastMs = now;
    this.#seq += 1;
    return `${String(now).padStart(15, "0")}-${String(this.#seq).padStart(9, "0")}-${this.#o.writer}`;
  }

  /** Whether no endpoint has events waiting in memory. */
  buffersEmpty(): boolean {
    return this.#o.states.every((state) => state.buffer.count === 0);
  }

  /** The buffers were emptied: no flush is due until the next pull. */
  disarmFlush(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#bufferedPulls = 0;
  }

  /** Record `event` in the buffers of the endpoints that take it; resolves once it is as durable as its action asks. */
  record(event: RegistryEvent): Promise<void> {
    try {
      const first = this.#firstTaker(event.action, event.target.mediaType);
      if (first < 0) return RECORDED;
      this.#o.lines.add(this.#o.states[first]!.buffer, event);
      this.#copyToOthers(first, event.action, event.target.mediaType);
      return this.#buffered(event.action);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@link record} for an event given by its parts (see `RECORD_PARTS`): no event object, its ids drawn here. */
  recordParts(parts: EventParts, source: EventSource, request: Request | undefined): Promise<void> {
    try {
      const { action, target } = parts;
      const first = this.#firstTaker(action, target.mediaType);
      if (first < 0) return RECORDED;
      this.#o.lines.addParts(this.#o.states[first]!.buffer, action, target, parts.actor, source, request ? eventRequestParts(request, action) : undefined);
      this.#copyToOthers(first, action, target.mediaType);
      return this.#buffered(action);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Write what waits in memory now (logging, not throwing, a failure); resolves once every write started so far ended. */
  flush(): Promise<void> {
    if (this.buffersEmpty()) return this.writing;
    const count = this.#bufferedPulls;
    return this.#writeBuffered().catch((error) => this.#o.log({ level: "error", msg: "event outbox write failed: pull events lost", count, error: String(error) }));
  }

  /** Write pulls that delivery from memory could not send, into their place in the queue (`key`, named before any later write). */
  async writeRest(key: string, bytes: Uint8Array, count: number): Promise<void> {
    this.writesStarted++;
    await this.#chained(() => this.#o.storage.write(key, bytes)).catch((error) => this.#o.log({ level: "error", msg: "event outbox write failed: pull events lost", count, error: String(error) }));
  }

  /** Run `work` after every write chained before it; writes keep the order in which they were started. */
  #chained(work: () => Promise<unknown>): Promise<void> {
    const done = this.writing.then(work).then(() => {});
    this.writing = done.catch(() => {});
    return done;
  }

  /** Write what is buffered now, as one object per endpoint. */
  #writeBuffered(): Promise<void> {
    this.disarmFlush();
    this.writesStarted++;
    const name = this.nextName();
    const { storage, lease, written } = this.#o;
    const writes = this.#o.states.map((state) => (state.buffer.count === 0 ? undefined : { key: `${state.queue}/${name}`, lines: state.buffer.take().lines() }));
    return this.#chained(() => Promise.all(writes.map(async (w) => {
      if (!w) return;
      await storage.write(w.key, w.lines.bytes);
      if (lease.held) written.keep(w.key, w.lines);
    })));
  }

  /** The first endpoint that takes an event, or -1. */
  #firstTaker(action: EventAction, mediaType: string | undefined): number {
    const states = this.#o.states;
    for (let i = 0; i < states.length; i++) if (takes(states[i]!.endpoint, action, mediaType)) return i;
    return -1;
  }

  /** The event just added to the buffer of endpoint `first` goes to every later one that takes it too, with the same ids. */
  #copyToOthers(first: number, action: EventAction, mediaType: string | undefined): void {
    const states = this.#o.states;
    const from = states[first]!.buffer;
    for (let i = first + 1; i < states.length; i++) if (takes(states[i]!.endpoint, action, mediaType)) states[i]!.buffer.addCopy(from, from.count - 1);
  }

  /** An event is in the buffers: write it now, or (a pull) with the next write. */
  #buffered(action: EventAction): Promise<void> {
    if (action !== "pull") return this.#writeBuffered();
    this.#bufferedPulls += 1;
    const states = this.#o.states;
    if (states.some((state) => state.buffer.size >= PULL_BUFFER_BYTES)) void this.flush();
    else this.#flushTimer ??= setTimeout(() => void this.flush(), this.#o.pullFlushMs);
    // A full batch wakes a waiting delivery loop (cheapest test first: this runs for every pull).
    if (states.some((state) => state.buffer.count >= state.batchLimit)) this.#o.wake();
    return RECORDED;
  }
}
