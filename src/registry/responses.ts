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

/** An absolute URL on the request's origin. */
export function absolute(request: Request, path: string): string {
  return new URL(path, request.url).href;
}
