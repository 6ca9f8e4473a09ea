/**
 * Streams a request body into an upload object while hashing it
 * (docs/architecture.md rules 3 and 4): request.body → hasher →
 * driver.append, one chunk at a time, never buffered whole.
 *
 * @module
 */
import { StorageError, type StorageDriver } from "../../../storage/driver.js";
import type { DigestAlgorithm } from "../../../oci/digest.js";
import { RegistryError } from "../../../oci/errors.js";
import { createHasher, type StreamHasher } from "../../../oci/hash.js";
import { hasOwnedChunks, markOwnedChunks } from "../../../runtime/adapter-capabilities.js";

/** The outcome of {@link appendBody}. */
export interface AppendResult {
  /** Size of the upload object after the append. */
  size: number;
  /** Bytes this request contributed. */
  written: number;
  /** The hasher, having seen this request's bytes (after whatever it had seen before). */
  hasher: StreamHasher;
}

/** Options of {@link appendBody}. */
export interface AppendBodyOptions {
  /** The size `key` must have now (else 416). */
  expectedSize: number;
  /** The digest algorithm, for a fresh hasher. */
  algorithm: DigestAlgorithm;
  /** A hasher that has seen bytes `[0, expectedSize)`; a fresh one when absent. */
  hasher?: StreamHasher;
  /** Whether the upload object may be created (false: a session being continued). Default true. */
  create?: boolean;
  /** The most bytes this body may add; past it, the append fails with `tooLarge()`. */
  maxBytes?: number;
  /** The error for a body over `maxBytes`. */
  tooLarge?: () => RegistryError;
  /** Aborts the append (the request's signal). */
  signal?: AbortSignal;
}

const NEVER = new AbortController().signal;

/**
 * Append `body` (a request's) to `key`, which must currently hold `expectedSize`
 * bytes. Throws `RANGE_INVALID` (416) when it does not or when another request
 * is writing to it, `tooLarge()` past `maxBytes`, and `BLOB_UPLOAD_INVALID`
 * (400) when the client's body fails or the request is aborted; other
 * failures (the driver's) propagate.
 *
 * The bytes are hashed into the hasher as they pass to the driver; after a
 * failure the hasher's state is unknown and it must be dropped.
 */
export async function appendBody(storage: StorageDriver, body: ReadableStream<Uint8Array> | null, key: string, options: AppendBodyOptions): Promise<AppendResult> {
  const { expectedSize, create = true, maxBytes = Infinity } = options;
  const hasher = options.hasher ?? createHasher(options.algorithm);
  let overLimit = false;
  let written = 0;
  let bodyFailed = false;
  const source = body;
  const signal = options.signal ?? NEVER;
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
          if (written + result.value.byteLength > maxBytes) {
            overLimit = true;
            // Stop reading the client's body: nothing more of it will be stored.
            void reader.cancel().catch(() => {});
            throw new Error("the body is over the upload limit");
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
    // Each chunk is hashed before it is passed on, and kept by nothing here: the driver may free what it stored.
    if (hasOwnedChunks(source)) markOwnedChunks(stream);
  }
  try {
    const size = await storage.append(key, stream, { expectedSize, create, signal });
    return { size, written, hasher };
  } catch (error) {
    if (overLimit) throw options.tooLarge?.() ?? new RegistryError("SIZE_INVALID", "the upload is over its size limit", 413);
    if (error instanceof StorageError && error.code === "conflict") {
      // The size moved, or another request is writing to this upload right now (one writer at a time).
      throw new RegistryError("RANGE_INVALID", "upload offset does not match the stored size, or another request is writing to this upload", 416, undefined, {
        Range: `0-${Math.max(0, expectedSize - 1)}`,
      });
    }
    if (bodyFailed || signal.aborted) {
      throw new RegistryError("BLOB_UPLOAD_INVALID", "the request body could not be read to the end");
    }
    throw error;
  }
}
