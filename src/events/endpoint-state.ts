/**
 * What the notifier knows of each endpoint it delivers to: the endpoint, its
 * queue in storage, the pulls waiting in memory for it, and its delivery
 * state (failures, backoff, envelope size, progress through the queue).
 *
 * @module
 */
import type { ResolvedEndpoint } from "./endpoint.js";
import { PendingEvents } from "./pending-events.js";

/** One endpoint's state, shared by the outbox writer (its buffer) and the delivery (the rest). */
export interface EndpointState {
  readonly endpoint: ResolvedEndpoint;
  /** The key prefix of its queue: `<prefix>/outbox/<endpoint>`. */
  readonly queue: string;
  /** Events for this endpoint waiting in memory (pulls), as their parts. */
  readonly buffer: PendingEvents;
  failures: number;
  resumeAt: number;
  /** Most events in one envelope to this endpoint: `maxBatch`, halved after each 413 answer. */
  batchLimit: number;
  /** The events of the first queued object that this process already delivered (it was cut between envelopes). */
  progress?: { key: string; at: number } | undefined;
  /** When a listing last found the queue empty, and how many writes this process had started then (see outbox-delivery.ts). */
  emptyQueue?: { at: number; writes: number } | undefined;
}

/** The starting state of `endpoint`'s delivery under the outbox `prefix`. */
export function endpointState(endpoint: ResolvedEndpoint, prefix: string, maxBatch: number): EndpointState {
  return { endpoint, queue: `${prefix}/outbox/${endpoint.name}`, buffer: new PendingEvents(), failures: 0, resumeAt: 0, batchLimit: maxBatch };
}
