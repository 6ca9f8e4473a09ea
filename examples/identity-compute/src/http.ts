/**
 * The few `Request`/`Response` helpers the three services share. The example
 * keeps its own (a dozen lines) rather than reaching into registry-kit's
 * internals: it uses only the package's public names, so it runs the same
 * copied into a project that installed `registry-kit`.
 *
 * @module
 */
import type { LogHook } from "registry-kit";

const encoder = new TextEncoder();

/** A log hook that drops every event (the services' default). */
export const silent: LogHook = () => {};

/** A JSON response with `status`, extra `headers` and its `Content-Length`. */
export function json(body: unknown, status = 200, headers?: HeadersInit): Response {
  const all = new Headers(headers);
  if (!all.has("content-type")) all.set("content-type", "application/json; charset=utf-8");
  const bytes = encoder.encode(JSON.stringify(body));
  all.set("content-length", String(bytes.byteLength));
  return new Response(bytes, { status, headers: all });
}

/** Thrown by {@link readLimitedText} when a body is larger than allowed. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/**
 * A request body as UTF-8 text, failing with {@link BodyTooLargeError} as soon
 * as more than `limit` bytes have arrived (or are announced by `Content-Length`),
 * so an oversized body is never buffered whole.
 */
export async function readLimitedText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new BodyTooLargeError(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}
