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

/** The headers an event reads, by their lower-case names. */
interface Read {
  host?: string;
  "user-agent"?: string;
  "x-request-id"?: string;
  "x-forwarded-for"?: string;
  "x-real-ip"?: string;
}
type Wanted = keyof Read;

/** Whether `name` is `lower` in any case; `canonical` is the usual spelling (HTTP clients send it), compared first without a copy. */
function named(name: string, lower: string, canonical: string): boolean {
  return name === canonical || name === lower || name.toLowerCase() === lower;
}

/** The wanted header a line's name is, if any (by length first: most lines are none of them). */
function wanted(name: string): Wanted | undefined {
  switch (name.length) {
    case 4:
      return named(name, "host", "Host") ? "host" : undefined;
    case 9:
      return named(name, "x-real-ip", "X-Real-Ip") ? "x-real-ip" : undefined;
    case 10:
      return named(name, "user-agent", "User-Agent") ? "user-agent" : undefined;
    case 12:
      return named(name, "x-request-id", "X-Request-Id") ? "x-request-id" : undefined;
    case 15:
      return named(name, "x-forwarded-for", "X-Forwarded-For") ? "x-forwarded-for" : undefined;
    default:
      return undefined;
  }
}

function fromPairs(pairs: HeaderPairs): Read {
  const read: Read = {};
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    const name = wanted(pair[0]);
    if (name === undefined) continue;
    const before = read[name];
    read[name] = before === undefined ? pair[1] : `${before}, ${pair[1]}`;
  }
  return read;
}

function fromHeaders(headers: Headers): Read {
  const get = (name: Wanted): string | undefined => headers.get(name) ?? undefined;
  return { host: get("host"), "user-agent": get("user-agent"), "x-request-id": get("x-request-id"), "x-forwarded-for": get("x-forwarded-for"), "x-real-ip": get("x-real-ip") };
}

/** The request record of `request`: id, client address (behind a proxy), host, method, user agent. */
export function requestRecord(request: Request): EventRequest {
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
  const forwarded = clip(headers["x-forwarded-for"])?.split(",")[0]?.trim();
  const record: EventRequest = {
    id: clip(headers["x-request-id"]) ?? nextId(),
    method: request.method.toUpperCase(),
    useragent: clip(headers["user-agent"]) ?? "",
  };
  const addr = forwarded || clip(headers["x-real-ip"]);
  if (addr) record.addr = addr;
  if (host) record.host = host;
  return record;
}
