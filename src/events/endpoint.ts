/**
 * One webhook endpoint, configured as Distribution's `notifications.endpoints`
 * entry: which events it takes, and one POST of an envelope.
 *
 * @module
 */
import { EVENTS_MEDIA_TYPE, isDistributionAction, type EventAction, type RegistryEvent } from "./model.js";

/** An endpoint, with Distribution's field names. */
export interface WebhookEndpoint {
  /** Unique name; it keys the endpoint's delivery position in the outbox. */
  name: string;
  /** Where envelopes are POSTed. */
  url: string;
  /** Extra request headers (e.g. `Authorization`); a value list is sent as several values. */
  headers?: Record<string, string | readonly string[]>;
  /** How long one POST may take, in milliseconds. Default 1000. */
  timeout?: number;
  /** Failures in a row before the endpoint backs off. Default 10. */
  threshold?: number;
  /** How long to wait after `threshold` failures, in milliseconds. Default 1000. */
  backoff?: number;
  /** Events whose `target.mediaType` is one of these are not sent (older spelling of `ignore.mediatypes`). */
  ignoredmediatypes?: readonly string[];
  /** Events to leave out. */
  ignore?: {
    /** Targets of these media types are not sent. */
    mediatypes?: readonly string[];
    /** Events with these actions (`pull`, `push`, `mount`, `delete`) are not sent. */
    actions?: readonly string[];
  };
  /** Configured but not sent to. */
  disabled?: boolean;
}

/** An endpoint with its defaults applied and its filters as sets. */
export interface ResolvedEndpoint {
  name: string;
  url: string;
  headers: [string, string][];
  timeoutMs: number;
  threshold: number;
  backoffMs: number;
  ignoredMediaTypes: ReadonlySet<string>;
  ignoredActions: ReadonlySet<string>;
  disabled: boolean;
}

/** Check an endpoint (TypeError naming the field) and apply the defaults. */
export function resolveEndpoint(endpoint: WebhookEndpoint): ResolvedEndpoint {
  const where = `notifications endpoint ${JSON.stringify(endpoint.name ?? "")}`;
  if (typeof endpoint.name !== "string" || !/^[A-Za-z0-9._-]{1,100}$/.test(endpoint.name)) {
    throw new TypeError(`${where}: name must be 1 to 100 letters, digits, '.', '_' or '-'`);
  }
  let url: URL;
  try {
    url = new URL(endpoint.url);
  } catch {
    throw new TypeError(`${where}: url must be an absolute http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`${where}: url must be an absolute http(s) URL`);
  const positive = (value: number | undefined, fallback: number, field: string, min: number): number => {
    const n = value ?? fallback;
    if (!Number.isFinite(n) || n < min) throw new TypeError(`${where}: ${field} must be a number >= ${min}`);
    return n;
  };
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(endpoint.headers ?? {})) {
    for (const v of typeof value === "string" ? [value] : value) headers.push([name, v]);
  }
  return {
    name: endpoint.name,
    url: url.href,
    headers,
    timeoutMs: positive(endpoint.timeout, 1000, "timeout", 1),
    threshold: Math.floor(positive(endpoint.threshold, 10, "threshold", 1)),
    backoffMs: positive(endpoint.backoff, 1000, "backoff", 0),
    ignoredMediaTypes: new Set([...(endpoint.ignoredmediatypes ?? []), ...(endpoint.ignore?.mediatypes ?? [])]),
    ignoredActions: new Set(endpoint.ignore?.actions ?? []),
    disabled: endpoint.disabled ?? false,
  };
}

/** Whether `endpoint` takes `event`: Distribution's actions and `audit`, minus the ignored ones. */
export function wants(endpoint: ResolvedEndpoint, event: RegistryEvent): boolean {
  return takes(endpoint, event.action, event.target.mediaType);
}

/** {@link wants} for an event given by its action and its target's media type. */
export function takes(endpoint: ResolvedEndpoint, action: EventAction, mediaType: string | undefined): boolean {
  // Audit records go out too (issue 45): a receiver keeps an outside copy of the hash chain.
  if (!(isDistributionAction(action) || action === "audit") || endpoint.ignoredActions.has(action)) return false;
  return !(mediaType !== undefined && endpoint.ignoredMediaTypes.has(mediaType));
}

/** Why a POST failed; the message names the endpoint and status, never the headers. */
export class DeliveryError extends Error {
  /** The HTTP status of the answer, when there was one. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

/**
 * One HTTP POST of an envelope: resolves to the answer's status once its
 * headers are in (the body is discarded), rejects when no answer came.
 * `signal` aborts it at the endpoint's timeout.
 */
export type WebhookPost = (url: string, headers: readonly (readonly [string, string])[], body: Uint8Array<ArrayBuffer>, signal: AbortSignal) => Promise<number>;

/** The default {@link WebhookPost}: `fetch`, without following redirects. */
export const fetchPost: WebhookPost = async (url, headers, body, signal) => {
  const response = await fetch(url, { method: "POST", headers: headers as [string, string][], body, redirect: "manual", signal });
  await response.body?.cancel();
  return response.status;
};

/**
 * POST one envelope (its body already serialized, see outbox-format.ts) with
 * `send`; resolves on a 2xx or 3xx answer, rejects with a
 * {@link DeliveryError} otherwise.
 */
export async function post(endpoint: ResolvedEndpoint, body: Uint8Array<ArrayBuffer>, send: WebhookPost = fetchPost): Promise<void> {
  // The envelope's media type replaces any Content-Type of the endpoint's headers.
  const headers: [string, string][] = endpoint.headers.filter(([name]) => name.toLowerCase() !== "content-type");
  headers.push(["Content-Type", EVENTS_MEDIA_TYPE]);
  // A timer cleared once answered, not AbortSignal.timeout: that one fires after every POST, answered or not,
  // and makes a DOMException with its stack each time (~60 µs of CPU a POST on Node 20).
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`no answer within ${endpoint.timeoutMs} ms`, "TimeoutError"));
  }, endpoint.timeoutMs);
  // As AbortSignal.timeout's timer: it alone does not keep a Node or Deno process alive.
  (timer as { unref?: () => void }).unref?.();
  let status: number;
  try {
    status = await send(endpoint.url, headers, body, controller.signal);
  } catch (error) {
    const reason = controller.signal.aborted ? `no answer within ${endpoint.timeoutMs} ms` : error instanceof Error ? error.message : String(error);
    throw new DeliveryError(`endpoint ${endpoint.name}: ${reason}`);
  } finally {
    clearTimeout(timer);
  }
  if (status < 200 || status >= 400) throw new DeliveryError(`endpoint ${endpoint.name}: HTTP ${status}`, status);
}
