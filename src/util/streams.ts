/**
 * Runtime-neutral stream helpers shared by the HTTP helpers, the storage
 * drivers, the registry and the client: a stream of bytes in memory, reading a
 * small stream whole (with a limit), and releasing a body nobody will read.
 *
 * @module
 */
import { concatBytes } from "./bytes.js";

/**
 * Release a body that will not be read (e.g. an append refused with
 * `conflict`), so that its source (a request body) is not left hanging.
 */
export function discard(body: Uint8Array | ReadableStream<Uint8Array>): void {
  if (!(body instanceof Uint8Array) && !body.locked) body.cancel().catch(() => {});
}

/** A stream of the given bytes, in one chunk (none when empty). */
export function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

/**
 * Read a whole stream into one `Uint8Array`. For small objects only
 * (manifests, bookkeeping objects, request bodies with a limit). With
 * `limit`, the stream is cancelled and `tooLarge()` thrown as soon as more
 * than `limit` bytes have arrived.
 */
export async function readAll(
  stream: ReadableStream<Uint8Array>,
  limit = Infinity,
  tooLarge: () => Error = () => new RangeError(`stream exceeds ${limit} bytes`),
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 1) return chunks[0]!;
  return concatBytes(chunks, size);
}
