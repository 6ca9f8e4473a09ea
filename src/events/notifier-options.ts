/**
 * The options and the handle of `createNotifier` (notifier.ts).
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import type { StorageDriver } from "../storage/driver.js";
import type { WebhookEndpoint, WebhookPost } from "./endpoint.js";
import type { EventSink } from "./hook.js";

/** Options of `createNotifier`. */
export interface NotifierOptions {
  /** Where the outbox lives; processes that share it deliver together (one at a time). */
  storage: StorageDriver;
  /** The webhook endpoints. */
  endpoints: readonly WebhookEndpoint[];
  /** Send `target.references` of manifest events (`notifications.events.includereferences`). Default false. */
  includeReferences?: boolean;
  /** Key prefix of the outbox. Default `_events` (outside the registry's `docker/…` layout). */
  prefix?: string;
  /**
   * Longest time a pull event waits in memory before it is written; what a
   * crash can lose. Default 1000 ms. The delivering process sends its own
   * waiting pulls from memory after half of it (or once `maxBatch` wait), and
   * those the endpoint accepts are never written.
   */
  pullFlushMs?: number;
  /**
   * Most events in one envelope. Default 1000 (about 650 KiB of pulls): a POST
   * costs the registry far more than the bytes in it. An endpoint that answers
   * 413 gets envelopes of half the size from then on.
   */
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
  /**
   * How an envelope is POSTed. Default `fetch`. On Node, `nodeWebhookPost()`
   * from `registry-kit/node` (node:http) costs about a fifth of the CPU per
   * envelope, and `nodeWebhookPost({ worker: true })` makes the POSTs from a
   * worker thread.
   */
  post?: WebhookPost;
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
