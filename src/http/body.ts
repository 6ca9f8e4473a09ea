/**
 * Reading request bodies with a size limit, for the small JSON and form bodies
 * of the token and management routes and for manifests. Blobs never go through
 * here: they are streamed.
 *
 * @module
 */
import { readAll } from "../util/streams.js";

/** Thrown by {@link readLimited} when a body is larger than allowed. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/**
 * Read a whole request body, failing fast with {@link BodyTooLargeError} as soon
 * as more than `limit` bytes have arrived (a declared `Content-Length` above the
 * limit fails before anything is read).
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new BodyTooLargeError(limit);
  if (!request.body) return new Uint8Array(0);
  return readAll(request.body, limit, () => new BodyTooLargeError(limit));
}

/** Read a body as UTF-8 text with a size limit (see {@link readLimited}). */
export async function readLimitedText(request: Request, limit: number): Promise<string> {
  return new TextDecoder().decode(await readLimited(request, limit));
}
