/**
 * Cutting a body into pieces of exactly `size` bytes (the last one shorter):
 * R2 wants the length of every value it stores up front, and every part of a
 * multipart upload but the last of one size. A stream is held one piece at a
 * time; a `Uint8Array` body is cut into views, not copied.
 *
 * @module
 */
import { concatBytes } from "../../util/bytes.js";
import type { StorageBody } from "../driver.js";
import { bodyChunks } from "../streams.js";

/**
 * The pieces of `body`, in order; none for an empty body. Errors and aborts
 * are those of `bodyChunks` (`aborted`, `io` with the body's error as cause);
 * stopping early cancels the body.
 */
export async function* pieces(body: StorageBody, size: number, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array, void, undefined> {
  if (body instanceof Uint8Array) {
    for await (const bytes of bodyChunks(body, signal)) {
      for (let offset = 0; offset < bytes.byteLength; offset += size) yield bytes.subarray(offset, offset + size);
    }
    return;
  }
  let held: Uint8Array[] = [];
  let length = 0;
  for await (let chunk of bodyChunks(body, signal)) {
    while (length + chunk.byteLength >= size) {
      const take = size - length;
      held.push(chunk.subarray(0, take));
      yield concatBytes(held, size);
      chunk = chunk.subarray(take);
      held = [];
      length = 0;
    }
    if (chunk.byteLength > 0) {
      held.push(chunk);
      length += chunk.byteLength;
    }
  }
  if (length > 0) yield concatBytes(held, length);
}
