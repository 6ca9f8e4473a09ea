/**
 * The `request` record of an event, read from a fetch `Request`: from its
 * header lines as received when it offers them (the Node adapter's light
 * request, see src/http/header-pairs.ts), else through `headers`. Both read
 * the same values: repeated lines joined with ", ", as `Headers.get` does.
 *
 * @module
 */
import { headerPairs, type HeaderPairs } from "../http/header-pairs.js";
import { nextId } from "./ids.js";
import type { EventRequest } from "./model.js";

/** Longest header value copied into an event (a hostile client could send huge ones). */
const MAX_FIELD = 512;

function clip(value: string | null | undefined): string | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed.slice(0, MAX_FIELD);
}

/** The headers an event reads (always all five fields, so that every `Read` has one shape). */
interface Read {
  host: string | undefined;
  userAgent: string | undefined;
  requestId: string | undefined;
  forwardedFor: string | undefined;
  realIp: string | undefined;
}

/** Which wanted header a line is (numbers, so that the scan compares no strings twice). */
const Wanted = { None: 0, Host: 1, UserAgent: 2, RequestId: 3, ForwardedFor: 4, RealIp: 5 } as const;
type Wanted = (typeof Wanted)[keyof typeof Wanted];

/** Whether `name` is `lower` in any case; `canonical` is the usual spelling (HTTP clients send it), compared first without a copy. */
function named(name: string, lower: string, canonical: string): boolean {
  return name === canonical || name === lower || name.toLowerCase() === lower;
}

/** The wanted header a line's name is, if any (by length first: most lines are none of them). */
function wanted(name: string): Wanted {
  switch (name.length) {
    case 4:
      return named(name, "host", "Host") ? Wanted.Host : Wanted.None;
    case 9:
      return named(name, "x-real-ip", "X-Real-Ip") ? Wanted.RealIp : Wanted.None;
    case 10:
      return named(name, "user-agent", "User-Agent") ? Wanted.UserAgent : Wanted.None;
    case 12:
      return named(name, "x-request-id", "X-Request-Id") ? Wanted.RequestId : Wanted.None;
    case 15:
      return named(name, "x-forwarded-for", "X-Forwarded-For") ? Wanted.ForwardedFor : Wanted.None;
    default:
      return Wanted.None;
  }
}

/** `before` and `value` as one header value (repeated lines joined with ", ", as `Headers.get` does). */
const joined = (before: string | undefined, value: string): string => (before === undefined ? value : `${before}, ${value}`);

function fromPairs(pairs: HeaderPairs): Read {
  const read: Read = { host: undefined, userAgent: undefined, requestId: undefined, forwardedFor: undefined, realIp: undefined };
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    switch (wanted(pair[0])) {
      case Wanted.None:
        break;
      case Wanted.Host:
        read.host = joined(read.host, pair[1]);
        break;
      case Wanted.UserAgent:
        read.userAgent = joined(read.userAgent, pair[1]);
        break;
      case Wanted.RequestId:
        read.requestId = joined(read.requestId, pair[1]);
        break;
      case Wanted.ForwardedFor:
        read.forwardedFor = joined(read.forwardedFor, pair[1]);
        break;
      case Wanted.RealIp:
        read.realIp = joined(read.realIp, pair[1]);
        break;
    }
  }
  return read;
}

function fromHeaders(headers: Headers): Read {
  const get = (name: string): string | undefined => headers.get(name) ?? undefined;
  return { host: get("host"), userAgent: get("user-agent"), requestId: get("x-request-id"), forwardedFor: get("x-forwarded-for"), realIp: get("x-real-ip") };
}

/** An event's request record whose `id` is the one the client sent (`X-Request-Id`), if any. */
export type RequestParts = Omit<EventRequest, "id"> & { id: string | undefined };

/** The request record of `request` without a drawn id: the fields an outbox line writes directly. */
export function requestParts(request: Request): RequestParts {
  const pairs = headerPairs(request);
  const headers = pairs ? fromPairs(pairs) : fromHeaders(request.headers);
  let host = clip(headers.host);
  if (host === undefined) {
    try {
      host = new URL(request.url).host;
    } catch {
      // keep it absent
    }
  }
  const forwarded = clip(headers.forwardedFor)?.split(",")[0]?.trim();
  const method = request.method;
  const record: RequestParts = {
    id: clip(headers.requestId),
    // Clients send the usual methods in upper case already: no copy for them.
    method: method === "GET" || method === "HEAD" ? method : method.toUpperCase(),
    useragent: clip(headers.userAgent) ?? "",
  };
  const addr = forwarded || clip(headers.realIp);
  if (addr) record.addr = addr;
  if (host) record.host = host;
  return record;
}

/** The request record of `request`: id (the client's, else drawn), client address (behind a proxy), host, method, user agent. */
export function requestRecord(request: Request): EventRequest {
  const record = requestParts(request);
  record.id ??= nextId();
  return record as EventRequest;
}
