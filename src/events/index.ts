/**
 * Events: the typed event every service emits through its `onEvent` option,
 * and Distribution-compatible webhook notifications through a durable outbox.
 *
 * ```ts
 * import { createNotifier } from "registry-kit/events";
 * import { createRegistry } from "registry-kit/registry";
 *
 * const notifier = createNotifier({ storage, endpoints: [{ name: "ci", url: "http://127.0.0.1:9000/events" }] });
 * notifier.start();
 * const actions: string[] = [];
 * const registry = createRegistry({ storage, onEvent: [notifier, (event) => void actions.push(event.action)] });
 * ```
 *
 * @module
 */
export { EVENTS_MEDIA_TYPE, DISTRIBUTION_ACTIONS } from "./model.js";
export type { AuditEventRecord, EventAction, EventActor, EventDescriptor, EventRequest, EventSource, EventTarget, RegistryEvent } from "./model.js";
export type { EventHook, EventListener, EventSink } from "./hook.js";
export { createNotifier } from "./notifier.js";
export type { Notifier, NotifierOptions } from "./notifier.js";
export type { WebhookEndpoint, WebhookPost } from "./endpoint.js";
