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

/** The headers an event reads, by their slot in a {@link Read}. */
const HOST = 0;
const USER_AGENT = 1;
const REQUEST_ID = 2;
const FORWARDED_FOR = 3;
const REAL_IP = 4;
/** Their lower-case names, by slot. */
const NAMES = ["host", "user-agent", "x-request-id", "x-forwarded-for", "x-real-ip"];

/** The values of the headers an event reads, by slot: one array shape whichever of them a request has. */
type Read = (string | undefined)[];

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

function fromPairs(pairs: HeaderPairs): Read {
  const read: Read = [undefined, undefined, undefined, undefined, undefined];
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    const slot = slotOf(pair[0]);
    if (slot < 0) continue;
    // Repeated lines joined with ", ", as `Headers.get` does.
    const before = read[slot];
    read[slot] = before === undefined ? pair[1] : `${before}, ${pair[1]}`;
  }
  return read;
}

function fromHeaders(headers: Headers): Read {
  return NAMES.map((name) => headers.get(name) ?? undefined);
}

/** An event's request record whose `id` is the one the client sent (`X-Request-Id`), if any. */
export type RequestParts = Omit<EventRequest, "id"> & { id: string | undefined };

/** The request record of `request` without a drawn id: the fields an outbox line writes directly. */
export function requestParts(request: Request): RequestParts {
  const pairs = headerPairs(request);
  const headers = pairs ? fromPairs(pairs) : fromHeaders(request.headers);
  let host = clip(headers[HOST]);
  if (host === undefined) {
    try {
      host = new URL(request.url).host;
    } catch {
      // keep it absent
    }
  }
  const forwarded = clip(headers[FORWARDED_FOR])?.split(",")[0]?.trim();
  const method = request.method;
  const record: RequestParts = {
    id: clip(headers[REQUEST_ID]),
    // Clients send the usual methods in upper case already: no copy for them.
    method: method === "GET" || method === "HEAD" ? method : method.toUpperCase(),
    useragent: clip(headers[USER_AGENT]) ?? "",
  };
  const addr = forwarded || clip(headers[REAL_IP]);
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
