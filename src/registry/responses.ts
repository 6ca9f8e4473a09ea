/**
 * Response builders for the registry: every response carries the API version
 * headers (via `baseHeaders`), and URLs handed to clients are absolute.
 *
 * @module
 */
import { jsonResponse } from "../http/response.js";
import { HEADERS, baseHeaders, setPair } from "../oci/wire.js";

/** An empty-bodied registry response with `Content-Length: 0`. */
export function empty(status: number, headers?: Headers): Response {
  const h = baseHeaders(headers);
  h.set("Content-Length", "0");
  return new Response(null, { status, headers: h });
}

/** A JSON registry response to `request` (which lets it take the adapter's in-memory fast lane). */
export function jsonBody(request: Request, body: unknown, status = 200, headers?: HeadersInit, contentType = "application/json; charset=utf-8"): Response {
  const h = baseHeaders(headers);
  h.set("Content-Type", contentType);
  return jsonResponse(body, status, h, request);
}

/** Headers with both digest header names set. */
export function digestHeaders(digest: string, init?: HeadersInit): Headers {
  const h = new Headers(init);
  setPair(h, HEADERS.contentDigest, digest);
  return h;
}

/** Paths that a URL keeps as they are: no dot segment, nothing to percent-encode, no query. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_:-][A-Za-z0-9._:-]*)+$/;
let lastBase = "";
let lastOrigin = "";
let lastPath = "";
let lastHref = "";

/** Whether `url` goes on with "/" right after `base`: then they have the same origin. */
const onBase = (url: string, base: string): boolean => base !== "" && url.startsWith(base) && url.charCodeAt(base.length) === 0x2f;

/**
 * An absolute URL on the request's origin. The origin of the last request's
 * URL is kept: parsing a URL is most of the cost, and a registry mostly
 * answers one host. So is the last answer: the target of each pull event is
 * one (a client pulls the same manifest many times).
 */
export function absolute(request: Request, path: string): string {
  const url = request.url;
  if (path === lastPath && onBase(url, lastBase)) return lastHref;
  if (!PLAIN_PATH.test(path)) return new URL(path, url).href;
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  const base = slash < 0 ? url : url.slice(0, slash);
  if (base !== lastBase) {
    // What comes before the path's first "/" decides the origin (and any user info) alone.
    lastOrigin = new URL("/", base).href.slice(0, -1);
    lastBase = base;
  }
  lastPath = path;
  lastHref = lastOrigin + path;
  return lastHref;
}

/** The parts of the last path {@link digestUrl} made, the base it was made on, and its answer. */
const lastDigestUrl = { prefix: "", name: "", kind: "", digest: "", base: "", href: "" };

/**
 * `absolute(request, `${prefix}/${name}/${kind}/${digest}`)`, without making
 * that path when its parts are the last ones asked on the same origin: the
 * URL in the target of every pull event (comparing the parts costs less than
 * joining and comparing the path).
 */
export function digestUrl(request: Request, prefix: string, name: string, kind: "manifests" | "blobs", digest: string): string {
  const last = lastDigestUrl;
  const url = request.url;
  if (digest === last.digest && name === last.name && kind === last.kind && prefix === last.prefix && onBase(url, last.base)) return last.href;
  const path = `${prefix}/${name}/${kind}/${digest}`;
  const href = absolute(request, path);
  // Kept only when `absolute` took the plain way, which leaves this request's base in lastBase.
  if (lastPath === path && lastHref === href) Object.assign(last, { prefix, name, kind, digest, base: lastBase, href });
  return href;
}
