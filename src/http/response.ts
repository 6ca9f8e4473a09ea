/**
 * Small Response builders shared by every service.
 *
 * @module
 */
import { inMemoryResponse } from "./in-memory-response.js";

const encoder = new TextEncoder();

/**
 * A JSON response with the given status and extra headers, with its
 * `Content-Length`. Given the `request` it answers, it can take the
 * adapter's in-memory fast lane (see in-memory-response.ts).
 */
export function json(body: unknown, status = 200, headers?: HeadersInit, request?: Request): Response {
  return jsonResponse(body, status, new Headers(headers), request);
}

/**
 * {@link json} on headers the caller built for this response (they are
 * completed in place, not copied): `Content-Type` when absent, and the
 * announced `Content-Length`, so adapters send headers and body in one write.
 */
export function jsonResponse(body: unknown, status: number, headers: Headers, request?: Request): Response {
  if (!headers.has("content-type")) headers.set("content-type", "application/json; charset=utf-8");
  const bytes = encoder.encode(JSON.stringify(body));
  headers.set("content-length", String(bytes.byteLength));
  return inMemoryResponse(request, bytes, { status, headers });
}

/** 405 Method Not Allowed with the `Allow` header. */
export function methodNotAllowed(allow: readonly string[], body?: unknown): Response {
  return json(body ?? { errors: [{ code: "UNSUPPORTED", message: "method not allowed" }] }, 405, { allow: allow.join(", ") });
}
