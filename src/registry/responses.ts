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

/**
 * An absolute URL on the request's origin. The origin of the last request's
 * URL is kept: parsing a URL is most of the cost, and a registry mostly
 * answers one host. So is the last answer: the target of each pull event is
 * one (a client pulls the same manifest many times).
 */
export function absolute(request: Request, path: string): string {
  const url = request.url;
  // Same path on the same base (the URL goes on with "/" right after it): the same answer.
  if (path === lastPath && url.startsWith(lastBase) && url.charCodeAt(lastBase.length) === 0x2f) return lastHref;
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
