/**
 * The `request` record of an event, read from a fetch `Request`: from its
 * header lines as received when it offers them (the Node adapter's light
 * request, see src/http/header-pairs.ts), else through `headers`. Both read
 * the same values: repeated lines joined with ", ", as `Headers.get` does.
 *
 * @module
 */
import { headerPairs } from "../http/header-pairs.js";
import { nextId } from "./ids.js";
import type { EventAction, EventRequest } from "./model.js";

/** Longest header value copied into an event (a hostile client could send huge ones). */
const MAX_FIELD = 512;

function clip(value: string | null | undefined): string | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed.slice(0, MAX_FIELD);
}

/** The headers an event reads, by the slot {@link slotOf} gives them. */
const HOST = 0;
const USER_AGENT = 1;
const REQUEST_ID = 2;
const FORWARDED_FOR = 3;
const REAL_IP = 4;

/** Whether `name` is `lower` in any case; `canonical` is the usual spelling (HTTP clients send it), compared first without a copy. */
function named(name: string, lower: string, canonical: string): boolean {
  return name === canonical || name === lower || name.toLowerCase() === lower;
}

/** The slot of the wanted header a line's name is, or -1 (by length first: most lines are none of them). */
function slotOf(name: string): number {
  switch (name.length) {
    case 4:
      return named(name, "host", "Host") ? HOST : -1;
    case 9:
      return named(name, "x-real-ip", "X-Real-Ip") ? REAL_IP : -1;
    case 10:
      return named(name, "user-agent", "User-Agent") ? USER_AGENT : -1;
    case 12:
      return named(name, "x-request-id", "X-Request-Id") ? REQUEST_ID : -1;
    case 15:
      return named(name, "x-forwarded-for", "X-Forwarded-For") ? FORWARDED_FOR : -1;
    default:
      return -1;
  }
}

/** Repeated lines joined with ", ", as `Headers.get` does. */
const joined = (before: string | undefined, value: string): string => (before === undefined ? value : `${before}, ${value}`);

/** An event's request record whose `id` is the one the client sent (`X-Request-Id`), if any. */
export type RequestParts = Omit<EventRequest, "id"> & { id: string | undefined };

/** The request record of `request` without a drawn id: the fields an outbox line writes directly. */
export function requestParts(request: Request): RequestParts {
  // The five values in locals, not an array by slot: a pull's event allocates no more than its record.
  let hostLine: string | undefined;
  let userAgent: string | undefined;
  let requestId: string | undefined;
  let forwardedFor: string | undefined;
  let realIp: string | undefined;
  const pairs = headerPairs(request);
  if (pairs) {
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i]!;
      switch (slotOf(pair[0])) {
        case HOST:
          hostLine = joined(hostLine, pair[1]);
          break;
        case USER_AGENT:
          userAgent = joined(userAgent, pair[1]);
          break;
        case REQUEST_ID:
          requestId = joined(requestId, pair[1]);
          break;
        case FORWARDED_FOR:
          forwardedFor = joined(forwardedFor, pair[1]);
          break;
        case REAL_IP:
          realIp = joined(realIp, pair[1]);
          break;
      }
    }
  } else {
    const headers = request.headers;
    hostLine = headers.get("host") ?? undefined;
    userAgent = headers.get("user-agent") ?? undefined;
    requestId = headers.get("x-request-id") ?? undefined;
    forwardedFor = headers.get("x-forwarded-for") ?? undefined;
    realIp = headers.get("x-real-ip") ?? undefined;
  }
  let host = clip(hostLine);
  if (host === undefined) {
    try {
      host = new URL(request.url).host;
    } catch {
      // keep it absent
    }
  }
  const forwarded = clip(forwardedFor)?.split(",")[0]?.trim();
  const method = request.method;
  const record: RequestParts = {
    id: clip(requestId),
    // Clients send the usual methods in upper case already: no copy for them.
    method: method === "GET" || method === "HEAD" ? method : method.toUpperCase(),
    useragent: clip(userAgent) ?? "",
  };
  const addr = forwarded || clip(realIp);
  if (addr) record.addr = addr;
  if (host) record.host = host;
  return record;
}

/**
 * Ids drawn for requests whose client sent no `X-Request-Id`, by request: a
 * request that causes several events gives them one id, as Distribution does
 * (a DELETE by digest also deletes its tags; a blob upload's last PUT can
 * create the repository). Held weakly: an entry goes with its request.
 */
const drawnIds = new WeakMap<Request, string>();

/**
 * The id an event of `action` gives `request` when its client sent none: the
 * one an earlier event of the same request got, else a new one, kept for the
 * next. `undefined` for a pull: a pull is the only event of its request (a
 * GET), so its id is drawn where it is written, and the hot path keeps no
 * entry per pull.
 */
export function sharedRequestId(request: Request, action: EventAction): string | undefined {
  if (action === "pull") return undefined;
  let id = drawnIds.get(request);
  if (id === undefined) {
    id = nextId();
    drawnIds.set(request, id);
  }
  return id;
}

/** {@link requestParts} for an event of `action`: its `id` the client's, else the request's {@link sharedRequestId} (none for a pull). */
export function eventRequestParts(request: Request, action: EventAction): RequestParts {
  const parts = requestParts(request);
  if (parts.id === undefined) parts.id = sharedRequestId(request, action);
  return parts;
}

/**
 * The request record of `request`: id, client address (behind a proxy), host,
 * method, user agent. The id is the client's (`X-Request-Id`), else the one
 * the request's other events have ({@link sharedRequestId}; with `action`
 * given), else a new one.
 */
export function requestRecord(request: Request, action?: EventAction): EventRequest {
  const record = action === undefined ? requestParts(request) : eventRequestParts(request, action);
  record.id ??= nextId();
  return record as EventRequest;
}
