/**
 * Small Response builders shared by every service.
 *
 * @module
 */

/** A JSON response with the given status and extra headers. */
export function json(body: unknown, status = 200, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  if (!h.has("content-type")) h.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** 405 Method Not Allowed with the `Allow` header. */
export function methodNotAllowed(allow: readonly string[], body?: unknown): Response {
  return json(body ?? { errors: [{ code: "UNSUPPORTED", message: "method not allowed" }] }, 405, { allow: allow.join(", ") });
}
