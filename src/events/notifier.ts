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
import { resolveEndpoint, type ResolvedEndpoint } from "./endpoint.js";
import { endpointState } from "./endpoint-state.js";
import { EventLines } from "./event-json.js";
import { AWAITED, RECORD_PARTS, type PartsSink } from "./hook.js";
import { Lease } from "./lease.js";
import type { Notifier, NotifierOptions } from "./notifier-options.js";
import { OutboxDelivery } from "./outbox-delivery.js";
import { OutboxWriter } from "./outbox-writer.js";
import { PassLoop } from "./pass-loop.js";
import { WrittenObjects } from "./written-objects.js";

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
 * Most bytes of outbox objects this process wrote and keeps in memory for its own delivery (it need not read
 * back what it just wrote) while it holds the lease.
 */
const KEEP_WRITTEN_BYTES = 16 * 1024 * 1024;

export type { Notifier, NotifierOptions };

/**
 * Create the outbox sink; give it to `onEvent` and call `start()`. It
 * composes the write side (`outbox-writer.ts`), the delivery side
 * (`outbox-delivery.ts`) over the endpoints' states (`endpoint-state.ts`),
 * the lease (`lease.ts`) and the delivery loop (`pass-loop.ts`).
 */
export function createNotifier(options: NotifierOptions): Notifier {
  const storage = options.storage;
  const prefix = options.prefix ?? "_events";
  const log = options.log ?? silent;
  const maxBatch = options.maxBatch ?? 1000;
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new TypeError("notifications maxBatch must be a whole number >= 1");
  const pullFlushMs = options.pullFlushMs ?? 1000;
  const states = uniqueEndpoints(options).filter((e) => !e.disabled).map((endpoint) => endpointState(endpoint, prefix, maxBatch));
  const writerId = `${PROCESS()}-${++notifiersMade}`;
  const lease = new Lease(storage, prefix, writerId, { durationMs: options.leaseMs ?? 10_000, skewMs: 2_000 });
  // What this process wrote, by key, for its own delivery pass: only while it holds the lease (another holder
  // would deliver and delete those objects), and dropped once delivered.
  const written = new WrittenObjects(KEEP_WRITTEN_BYTES);
  const lines = new EventLines(options.includeReferences ?? false);
  const wake = (): void => {
    if (loop.idle && lease.held) loop.wake();
  };
  const writer = new OutboxWriter({ storage, writer: writerId, states, lines, lease, written, log, pullFlushMs, wake });
  const delivery = new OutboxDelivery({ storage, states, lease, written, writer, send: options.post, log, pullFlushMs, pollMs: options.pollMs ?? 1000 });
  const deliverOnce = (): Promise<number> => delivery.deliverOnce();
  const loop = new PassLoop(deliverOnce, () => delivery.idleWait(), log);
  const flush = (): Promise<void> => writer.flush();

  const notifier: Notifier & PartsSink & { readonly [AWAITED]: true } = {
    record: (event) => writer.record(event),
    [RECORD_PARTS]: (parts, source, request) => writer.recordParts(parts, source, request),
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

/** The configured endpoints, resolved; refuses a name given twice. */
function uniqueEndpoints(options: NotifierOptions): ResolvedEndpoint[] {
  const endpoints = options.endpoints.map(resolveEndpoint);
  const names = new Set<string>();
  for (const e of endpoints) {
    if (names.has(e.name)) throw new TypeError(`notifications endpoint ${JSON.stringify(e.name)} is configured twice`);
    names.add(e.name);
  }
  return endpoints;
}
