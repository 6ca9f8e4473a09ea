/**
 * The `onEvent` option every service takes, and the one function that calls
 * it. A listener can never break or slow the request that caused an event: a
 * function listener runs in a later task, its exceptions and rejections go to
 * the log; a sink (`record`) is awaited, as a durable outbox must be, but its
 * failure is logged and the request still succeeds.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import { requestRecord } from "./request.js";
import type { EventActor, EventAction, EventSource, EventTarget, RegistryEvent } from "./model.js";

/** A listener: called once per event, after the request; what it returns or throws is ignored (and logged). */
export type EventListener = (event: RegistryEvent) => void | Promise<void>;

/**
 * A sink the service waits for before answering: `record` resolves once the
 * event is safe (the outbox of `createNotifier` writes it to storage). A
 * rejection is logged; the request is answered anyway.
 */
export interface EventSink {
  /** Take one event. */
  record(event: RegistryEvent): Promise<void>;
}

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
}

const resolved = Promise.resolve();

/** The emit function of a service without listeners: callers may skip building the event for it. */
export const NO_EVENTS: Emit = () => resolved;

/** Build the emit function of a service. */
export function eventEmitter(options: EmitterOptions): Emit {
  const hooks = options.onEvent === undefined ? [] : Array.isArray(options.onEvent) ? options.onEvent : [options.onEvent as EventListener | EventSink];
  if (hooks.length === 0) return NO_EVENTS;
  const source: EventSource = { instanceID: (instanceId ??= crypto.randomUUID()) };
  if (options.sourceAddr) source.addr = options.sourceAddr;
  const log = options.log;
  return async (request, parts) => {
    const actor: EventActor = parts.actor ? { name: parts.actor } : {};
    const event: RegistryEvent = {
      id: crypto.randomUUID(),
      timestamp: new Date().toISOString(),
      action: parts.action,
      target: parts.target,
      actor,
      source,
    };
    if (request) event.request = requestRecord(request);
    for (const hook of hooks) {
      if (typeof hook === "function") callLater(hook, event, log);
      else await record(hook, event, log);
    }
  };
}

function failed(log: LogHook, event: RegistryEvent, error: unknown): void {
  log({ level: "error", msg: "event listener failed", action: event.action, eventId: event.id, error: error instanceof Error ? error.message : String(error) });
}

/** Run `listener` after the current request has been answered; never let it throw into the caller. */
function callLater(listener: EventListener, event: RegistryEvent, log: LogHook): void {
  setTimeout(() => {
    try {
      const result = listener(event);
      if (result && typeof (result as Promise<void>).then === "function") (result as Promise<void>).then(undefined, (error) => failed(log, event, error));
    } catch (error) {
      failed(log, event, error);
    }
  }, 0);
}

async function record(sink: EventSink, event: RegistryEvent, log: LogHook): Promise<void> {
  try {
    await sink.record(event);
  } catch (error) {
    log({ level: "error", msg: "event sink failed: the event is lost", action: event.action, eventId: event.id, error: error instanceof Error ? error.message : String(error) });
  }
}
