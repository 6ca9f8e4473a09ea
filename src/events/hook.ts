/**
 * The `onEvent` option every service takes, and the one function that calls
 * it. A listener can never break or slow the request that caused an event: a
 * function listener runs in a later task; a sink (`record`) gets its events
 * through a bounded queue (sink-queue.ts), in order, off the request path.
 * Only registry-kit's own outbox ({@link AWAITED}) is waited for, as a durable
 * outbox must be. Every failure is logged (to the console when the service
 * has no `log`, hook-log.ts), and the request still succeeds.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import { timestampNow } from "./clock.js";
import { emitterLog } from "./hook-log.js";
import { nextId } from "./ids.js";
import { requestRecord } from "./request.js";
import { SinkQueue, type SinkQueueReports } from "./sink-queue.js";
import type { EventActor, EventAction, EventSource, EventTarget, RegistryEvent } from "./model.js";

/** A listener: called once per event, after the request; what it returns or throws is ignored (and logged). */
export type EventListener = (event: RegistryEvent) => void | Promise<void>;

/**
 * A sink: `record` is called once per event, in the order the events
 * happened, each call after the previous one settled, off the request path
 * (a slow sink cannot slow a request). Events wait for it in a bounded queue;
 * a sink more than 10,000 events behind loses the oldest waiting ones (logged
 * as `event sink queue full: oldest events dropped`). A throw or rejection is
 * logged (`event sink failed: the event is lost`). The notifier of
 * `createNotifier` is the exception: the service waits for it, so that push,
 * mount and delete are in its durable outbox before the client is answered.
 */
export interface EventSink {
  /** Take one event. */
  record(event: RegistryEvent): Promise<void>;
}

/**
 * Internal to registry-kit: marks a sink the service waits for before it
 * answers (the notifier's outbox, whose write before the response is what
 * makes an event durable). Any other sink is fed through a {@link SinkQueue}.
 */
export const AWAITED: unique symbol = Symbol("registry-kit.awaitedSink");

const awaited = (sink: EventSink): boolean => (sink as { [AWAITED]?: unknown })[AWAITED] === true;

/**
 * Internal to registry-kit: the method of a sink that writes an event straight
 * from its parts (the notifier's outbox). When every hook of a service has
 * it, the emitter builds no event object, and the sink draws the ids and the
 * timestamp only for an event some endpoint takes (a pull is most of a
 * registry's events, and most of what an event costs was building it).
 */
export const RECORD_PARTS: unique symbol = Symbol("registry-kit.recordParts");

/** A sink with {@link RECORD_PARTS}: it takes an event as its parts, as `record` takes it whole. */
export interface PartsSink extends EventSink {
  [RECORD_PARTS](parts: EventParts, source: EventSource, request: Request | undefined): Promise<void>;
}

const takesParts = (sink: EventSink): sink is PartsSink => typeof (sink as Partial<PartsSink>)[RECORD_PARTS] === "function";

/** What `onEvent` accepts: a listener, a sink, or several of them. */
export type EventHook = EventListener | EventSink | readonly (EventListener | EventSink)[];

/** The id of this process in `source.instanceID`, drawn on first use: workerd refuses random values at module scope. */
let instanceId: string | undefined;

/** What a service knows about an event; the rest is filled in by {@link eventEmitter}. */
export interface EventParts {
  /** What happened. */
  action: EventAction;
  /** What it happened to. */
  target: EventTarget;
  /** Who did it (a user name), when known. */
  actor?: string;
}

/** Emits events of one service; a no-op that resolves at once without a hook. */
export type Emit = (request: Request | undefined, parts: EventParts) => Promise<void>;

/** Options of {@link eventEmitter}. */
export interface EmitterOptions {
  /** The hook; `undefined` makes {@link Emit} a no-op. */
  onEvent?: EventHook;
  /** Where listener failures go. */
  log: LogHook;
  /** `source.addr` of every event. */
  sourceAddr?: string;
  /** Events a queued sink may fall behind by (tests); default `SINK_QUEUE_LIMIT` (sink-queue.ts). */
  sinkQueueLimit?: number;
}

/**
 * A promise already settled: a sink's `record` that returns this one (the
 * outbox for a pull it holds in memory) is taken at its word, without a
 * promise and a callback made per event to watch it.
 */
export const RECORDED: Promise<void> = Promise.resolve();

/** The emit function of a service without listeners: callers may skip building the event for it. */
export const NO_EVENTS: Emit = () => RECORDED;

/** Build the emit function of a service. */
export function eventEmitter(options: EmitterOptions): Emit {
  const hooks = options.onEvent === undefined ? [] : Array.isArray(options.onEvent) ? options.onEvent : [options.onEvent as EventListener | EventSink];
  if (hooks.length === 0) return NO_EVENTS;
  const source: EventSource = { instanceID: (instanceId ??= crypto.randomUUID()) };
  if (options.sourceAddr) source.addr = options.sourceAddr;
  const log = emitterLog(options.log);
  const listeners = hooks.filter((hook): hook is EventListener => typeof hook === "function");
  const sinks = hooks.filter((hook): hook is EventSink => typeof hook !== "function");
  const waitedFor = sinks.filter(awaited);
  const reports = queueReports(log);
  const queues = sinks.filter((sink) => !awaited(sink)).map((sink) => new SinkQueue((event) => sink.record(event), reports, options.sinkQueueLimit));
  const later = listeners.length > 0 ? laterQueue(listeners, log) : undefined;
  if (listeners.length === 0 && queues.length === 0 && waitedFor.every(takesParts)) {
    const partsSinks = waitedFor as PartsSink[];
    if (partsSinks.length === 1) {
      const sink = partsSinks[0]!;
      return (request, parts) => recordParts(sink, parts, source, request, log);
    }
    // Several sinks (the notifier and the audit log): still RECORDED when each says so, so a pull waits no turn.
    return (request, parts) => {
      let pending: Promise<void>[] | undefined;
      for (const sink of partsSinks) {
        const recorded = recordParts(sink, parts, source, request, log);
        if (recorded !== RECORDED) (pending ??= []).push(recorded);
      }
      if (pending === undefined) return RECORDED;
      return pending.length === 1 ? pending[0]! : Promise.all(pending).then(() => undefined);
    };
  }
  return (request, parts) => {
    const event: RegistryEvent = {
      id: nextId(),
      timestamp: timestampNow(),
      action: parts.action,
      target: parts.target,
      actor: parts.actor ? { name: parts.actor } : {},
      source,
    };
    if (request) event.request = requestRecord(request, parts.action);
    later?.(event);
    for (const queue of queues) queue.push(event);
    if (waitedFor.length === 1) return record(waitedFor[0]!, event, log);
    return waitedFor.length === 0 ? RECORDED : recordAll(waitedFor, event, log);
  };
}

/** How the queues of queued sinks report to `log`. */
function queueReports(log: LogHook): SinkQueueReports {
  return {
    failed: (action, eventId, error) => sinkFailed(log, action, eventId, error),
    dropped: (dropped, limit) => log({ level: "error", msg: "event sink queue full: oldest events dropped", dropped, limit }),
  };
}

function failed(log: LogHook, event: RegistryEvent, error: unknown): void {
  log({ level: "error", msg: "event listener failed", action: event.action, eventId: event.id, error: error instanceof Error ? error.message : String(error) });
}

/**
 * A queue that hands events to `listeners` after the current request has been
 * answered, in the order they happened: one timer per burst of events, not one
 * per event. A listener can never throw into the caller.
 */
function laterQueue(listeners: readonly EventListener[], log: LogHook): (event: RegistryEvent) => void {
  let queued: RegistryEvent[] = [];
  const run = (): void => {
    const events = queued;
    queued = [];
    for (const event of events) {
      for (const listener of listeners) {
        try {
          const result = listener(event);
          if (result && typeof (result as Promise<void>).then === "function") (result as Promise<void>).then(undefined, (error) => failed(log, event, error));
        } catch (error) {
          failed(log, event, error);
        }
      }
    }
  };
  return (event) => {
    if (queued.push(event) === 1) setTimeout(run, 0);
  };
}

function sinkFailed(log: LogHook, action: EventAction, eventId: string | undefined, error: unknown): void {
  log({ level: "error", msg: "event sink failed: the event is lost", action, ...(eventId === undefined ? {} : { eventId }), error: error instanceof Error ? error.message : String(error) });
}

/** Hand `event` to `sink`; resolves once it is recorded, never rejects. */
function record(sink: EventSink, event: RegistryEvent, log: LogHook): Promise<void> {
  try {
    const recorded = sink.record(event) as PromiseLike<void> | undefined;
    if (recorded === RECORDED || typeof recorded?.then !== "function") return RECORDED;
    return Promise.resolve(recorded).then(undefined, (error) => sinkFailed(log, event.action, event.id, error));
  } catch (error) {
    sinkFailed(log, event.action, event.id, error);
    return RECORDED;
  }
}

/** Hand `parts` to a sink that takes them; as {@link record}. */
function recordParts(sink: PartsSink, parts: EventParts, source: EventSource, request: Request | undefined, log: LogHook): Promise<void> {
  try {
    const recorded = sink[RECORD_PARTS](parts, source, request) as PromiseLike<void> | undefined;
    if (recorded === RECORDED || typeof recorded?.then !== "function") return RECORDED;
    return Promise.resolve(recorded).then(undefined, (error) => sinkFailed(log, parts.action, undefined, error));
  } catch (error) {
    sinkFailed(log, parts.action, undefined, error);
    return RECORDED;
  }
}

async function recordAll(sinks: readonly EventSink[], event: RegistryEvent, log: LogHook): Promise<void> {
  for (const sink of sinks) await record(sink, event, log);
}
