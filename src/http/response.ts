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
  const h = new Headers(headers);
  if (!h.has("content-type")) h.set("content-type", "application/json; charset=utf-8");
  const bytes = encoder.encode(JSON.stringify(body));
  h.set("content-length", String(bytes.byteLength));
  return inMemoryResponse(request, bytes, { status, headers: h });
}

/** 405 Method Not Allowed with the `Allow` header. */
export function methodNotAllowed(allow: readonly string[], body?: unknown): Response {
  return json(body ?? { errors: [{ code: "UNSUPPORTED", message: "method not allowed" }] }, 405, { allow: allow.join(", ") });
}
