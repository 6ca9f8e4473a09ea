/**
 * The queue between a service and an in-process sink (an `onEvent` object
 * with `record`, other than registry-kit's outbox): the request only appends
 * the event; the sink gets its events in a later task, one `record` at a
 * time and in order, each call after the previous one settled. A slow or
 * stuck sink therefore cannot slow a request. The queue is bounded: when it
 * is full the oldest waiting event is dropped (the sink is behind; the newest
 * events are the ones worth having), counted, and reported.
 *
 * @module
 */
import type { EventAction, RegistryEvent } from "./model.js";

/** Events a sink may fall behind by before the oldest waiting one is dropped. */
export const SINK_QUEUE_LIMIT = 10_000;

/** Drops are reported at most this often (a stuck sink would otherwise report every event). */
const DROP_REPORT_MS = 60_000;

/** Where a queue reports a failed `record` and dropped events. */
export interface SinkQueueReports {
  /** `record` threw or rejected for `event`. */
  failed(action: EventAction, eventId: string, error: unknown): void;
  /** The queue was full: `dropped` events were dropped since the last report (the first drop is reported at once). */
  dropped(dropped: number, limit: number): void;
}

/** A sink's `record` as the queue calls it. */
export type RecordFn = (event: RegistryEvent) => unknown;

/** A bounded first-in, first-out queue feeding one sink. */
export class SinkQueue {
  readonly #record: RecordFn;
  readonly #reports: SinkQueueReports;
  readonly #limit: number;
  /** Waiting events from `#head` on (a moving head: no copy per event taken). */
  #events: RegistryEvent[] = [];
  #head = 0;
  #running = false;
  /** Events dropped and not reported yet. */
  #dropped = 0;
  /** When drops were last reported (`Date.now()`). */
  #reportedAt = -Infinity;

  constructor(record: RecordFn, reports: SinkQueueReports, limit = SINK_QUEUE_LIMIT) {
    this.#record = record;
    this.#reports = reports;
    this.#limit = Math.max(1, limit);
  }

  /** Events waiting (the one the sink is taking now not included). */
  get waiting(): number {
    return this.#events.length - this.#head;
  }

  /** Append `event`; never waits, never throws. */
  push(event: RegistryEvent): void {
    if (this.waiting >= this.#limit) this.#drop();
    this.#events.push(event);
    if (!this.#running) {
      this.#running = true;
      // A later task: the request that caused the event is answered first.
      setTimeout(() => void this.#drain(), 0);
    }
  }

  /** Drop the oldest waiting event; report the first drop at once, later ones at most every {@link DROP_REPORT_MS}. */
  #drop(): void {
    this.#advance();
    this.#dropped += 1;
    const now = Date.now();
    if (now - this.#reportedAt < DROP_REPORT_MS) return;
    this.#reportedAt = now;
    const dropped = this.#dropped;
    this.#dropped = 0;
    this.#reports.dropped(dropped, this.#limit);
  }

  /** Take the oldest waiting event off the queue. */
  #advance(): RegistryEvent {
    const event = this.#events[this.#head]!;
    this.#head += 1;
    if (this.#head === this.#events.length) {
      this.#events = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#events.length) {
      // The taken events are at least half of the array: drop them (no copy per event taken).
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  async #drain(): Promise<void> {
    while (this.waiting > 0) {
      const event = this.#advance();
      try {
        await this.#record(event);
      } catch (error) {
        this.#reports.failed(event.action, event.id, error);
      }
    }
    this.#running = false;
    // Drops not reported yet (within DROP_REPORT_MS of the last report) are reported once the sink caught up.
    if (this.#dropped > 0) {
      this.#reportedAt = Date.now();
      this.#reports.dropped(this.#dropped, this.#limit);
      this.#dropped = 0;
    }
  }
}
