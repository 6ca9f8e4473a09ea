/**
 * Node `IncomingMessage` → WHATWG `Request`.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import type { TLSSocket } from "node:tls";
import { incomingBody } from "./body.js";
import { parseHost } from "./host.js";
import { lightRequest } from "./light-request.js";
import { NodeRequest } from "./node-request.js";

/** How {@link toRequest} builds the request URL. */
export interface RequestOptions {
  /**
   * Take the scheme and authority from `X-Forwarded-Proto` / `X-Forwarded-Host`
   * (first value of each) when present. Only enable this behind a proxy that
   * sets or strips these headers: otherwise any client can choose the host
   * that appears in `Location` headers and token realms. Default `false`.
   */
  trustProxy?: boolean;
}

/** Why a request could not be converted; the listener answers 400. */
export class BadRequestError extends Error {
  /** Always `"BadRequestError"`. */
  override readonly name = "BadRequestError";
}

/** Express keeps the unstripped path here when a middleware is mounted on a path. */
interface MaybeExpressRequest extends IncomingMessage {
  originalUrl?: string;
}

/**
 * Build the `Request` for `req`: method, every header line from `rawHeaders`
 * (duplicates appended, HTTP/2 pseudo-headers dropped), an absolute URL, the
 * body as a stream (none for GET and HEAD, nor when the request declares no
 * body), and `signal` (or a function making it, called the first time a
 * handler reads `request.signal`).
 * Throws {@link BadRequestError} for a missing or malformed Host.
 */
export function toRequest(
  req: IncomingMessage,
  signal: AbortSignal | (() => AbortSignal),
  options: RequestOptions = {},
  onFirstBodyPull?: () => void,
  /** The handler reads only the basics (`readsRequestBasics`): a request without a body may be a lighter `Request` look-alike (`LightRequest`, below). */
  basicsOnly = false,
): Request {
  const method = req.method ?? "GET";
  // Name/value pairs, not a Headers object: the Request copies whatever it is given.
  const headers: [string, string][] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.charCodeAt(0) !== 0x3a /* ":" */) headers.push([name, raw[i + 1] as string]);
  }
  const url = requestUrl(req, options);
  // A request has a body only when it says so (HTTP/1.1 framing): no stream for an empty POST or DELETE.
  // HTTP/2 has no framing headers: a stream ended with its headers has no body.
  const framed =
    req.headers["transfer-encoding"] !== undefined ||
    Number(req.headers["content-length"] ?? 0) > 0 ||
    (req.httpVersionMajor === 2 && !(req as unknown as Http2ServerRequest).stream.endAfterHeaders);
  const hasBody = method !== "GET" && method !== "HEAD" && framed;
  if (!hasBody && basicsOnly) return lightRequest({ method, url, pairs: headers, signal: typeof signal === "function" ? signal : () => signal });
  const init: RequestInit & { duplex?: "half" } = { method, headers };
  if (hasBody) {
    init.body = incomingBody(req, onFirstBodyPull);
    init.duplex = "half";
  }
  return new NodeRequest(url, init, signal);
}

/** The absolute URL of `req`: scheme from the socket, authority from Host (or forwarded headers). */
export function requestUrl(req: IncomingMessage, options: RequestOptions = {}): string {
  let scheme = (req.socket as TLSSocket | undefined)?.encrypted ? "https" : "http";
  // HTTP/2 names the authority in `:authority` (a Host header is optional there).
  let authority = req.headers.host ?? (req.headers[":authority"] as string | undefined);
  if (options.trustProxy) {
    const proto = firstValue(req.headers["x-forwarded-proto"])?.toLowerCase();
    if (proto === "http" || proto === "https") scheme = proto;
    const fwdHost = firstValue(req.headers["x-forwarded-host"]);
    if (fwdHost !== undefined) authority = fwdHost;
  }
  if (authority === undefined) {
    // HTTP/1.0 clients may omit Host (Node rejects HTTP/1.1 requests without it).
    throw new BadRequestError("missing Host header");
  }
  const host = parseHost(authority);
  if (host === undefined) throw new BadRequestError("invalid Host header");
  const target = (req as MaybeExpressRequest).originalUrl ?? req.url ?? "/";
  return `${scheme}://${host}${pathOf(target)}`;
}

/** The path and query of a request-target (origin-form, or absolute-form from proxies). */
function pathOf(target: string): string {
  if (target.startsWith("/")) return target;
  if (/^https?:\/\//i.test(target)) {
    try {
      const url = new URL(target);
      return `${url.pathname}${url.search}`;
    } catch {
      throw new BadRequestError("invalid request target");
    }
  }
  throw new BadRequestError("invalid request target");
}

function firstValue(value: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(value) ? value.join(",") : value;
  const first = joined?.split(",")[0]?.trim();
  return first ? first : undefined;
}
