/**
 * Streams a request body into an upload object while hashing it (DESIGN
 * rules 3 and 4): request.body → hasher → driver.append, one chunk at a time,
 * never buffered whole.
 *
 * @module
 */
import { StorageError, type StorageDriver } from "../storage/driver.js";
import type { DigestAlgorithm } from "./digest.js";
import { RegistryError } from "./errors.js";
import { createHasher, type StreamHasher } from "./hash.js";

/** The outcome of {@link appendBody}. */
export interface AppendResult {
  /** Size of the upload object after the append. */
  size: number;
  /** Bytes this request contributed. */
  written: number;
  /** The hasher, having seen this request's bytes (after whatever it had seen before). */
  hasher: StreamHasher;
}

/**
 * Append the request body to `key`, which must currently hold `expectedSize`
 * bytes. Throws `RANGE_INVALID` (416) when it does not, and
 * `BLOB_UPLOAD_INVALID` (400) when the client's body fails or the request is
 * aborted; other failures (the driver's) propagate. With `create` false the
 * upload object must exist (a session being continued, not started).
 *
 * The bytes are hashed into `hasher` (a fresh one for `algorithm` when not
 * given) as they pass to the driver; after a failure the hasher's state is
 * unknown and it must be dropped.
 */
export async function appendBody(
  storage: StorageDriver,
  request: Request,
  key: string,
  expectedSize: number,
  algorithm: DigestAlgorithm,
  hasher: StreamHasher = createHasher(algorithm),
  create = true,
): Promise<AppendResult> {
  let written = 0;
  let bodyFailed = false;
  const source = request.body;
  let stream: ReadableStream<Uint8Array> | Uint8Array = new Uint8Array(0);
  if (source) {
    const reader = source.getReader();
    stream = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          let result: ReadableStreamReadResult<Uint8Array>;
          try {
            result = await reader.read();
          } catch (error) {
            bodyFailed = true;
            throw error;
          }
          if (result.done) {
            controller.close();
            return;
          }
          hasher.update(result.value);
          written += result.value.byteLength;
          controller.enqueue(result.value);
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      },
      // pull only when the driver asks: no read-ahead buffering
      { highWaterMark: 0 },
    );
  }
  try {
    const size = await storage.append(key, stream, { expectedSize, create, signal: request.signal });
    return { size, written, hasher };
  } catch (error) {
    if (error instanceof StorageError && error.code === "conflict") {
      // The size moved, or another request is writing to this upload right now (one writer at a time).
      throw new RegistryError("RANGE_INVALID", "upload offset does not match the stored size, or another request is writing to this upload", 416, undefined, {
        Range: `0-${Math.max(0, expectedSize - 1)}`,
      });
    }
    if (bodyFailed || request.signal.aborted) {
      throw new RegistryError("BLOB_UPLOAD_INVALID", "the request body could not be read to the end");
    }
    throw error;
  }
}
