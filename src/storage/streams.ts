/**
 * Runtime-neutral helpers for drivers that consume a {@link StorageBody}.
 *
 * They give every driver the same rules for the failure cases the contract
 * suite checks: an abort signal wins even while the body is stalled, the body
 * is cancelled when the driver stops early, and a body's own error reaches the
 * caller as the `cause` of a `StorageError("io")`.
 *
 * @module
 */
import { StorageError, type StorageBody } from "./driver.js";

/** Throw `StorageError("aborted")` if `signal` is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new StorageError("aborted", "write aborted", { cause: signal.reason });
}

/**
 * Iterate over the chunks of a body. A `Uint8Array` body is yielded as it is
 * (callers that keep it must copy it). Zero-length chunks are skipped.
 *
 * - When `signal` aborts, the pending read is abandoned at once, the body is
 *   cancelled and `StorageError("aborted")` is thrown.
 * - When the body errors, `StorageError("io")` is thrown with the body's error
 *   as `cause` (a `StorageError` from the body is rethrown unchanged).
 * - When the consumer stops early (break or throw), the body is cancelled.
 */
export async function* bodyChunks(body: StorageBody, signal?: AbortSignal): AsyncGenerator<Uint8Array, void, undefined> {
  throwIfAborted(signal);
  if (body instanceof Uint8Array) {
    if (body.byteLength > 0) yield body;
    return;
  }
  const reader = body.getReader();
  let finished = false;
  // One listener for the whole body, not one per chunk. It rejects the read in
  // flight, if any. (Not Promise.race against one long-lived "aborted" promise:
  // every race leaves a reaction on it that keeps that read's chunk reachable,
  // so a streamed upload would stay in memory until the request ends.)
  let rejectRead: ((error: unknown) => void) | undefined;
  const onAbort = (): void => rejectRead?.(new StorageError("aborted", "write aborted", { cause: signal?.reason }));
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        throwIfAborted(signal);
        result = signal
          ? await new Promise<ReadableStreamReadResult<Uint8Array>>((resolve, reject) => {
              rejectRead = reject;
              reader.read().then(resolve, reject);
            })
          : await reader.read();
        rejectRead = undefined;
      } catch (error) {
        rejectRead = undefined;
        if (signal?.aborted) throw new StorageError("aborted", "write aborted", { cause: signal.reason });
        if (error instanceof StorageError) throw error;
        throw new StorageError("io", "the body stream failed", { cause: error });
      }
      if (result.done) {
        finished = true;
        return;
      }
      throwIfAborted(signal);
      if (result.value.byteLength > 0) yield result.value;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) {
      // Release the source (a request body, a file) without waiting on it: a stalled
      // source may never settle its cancel.
      reader.cancel(signal?.reason).catch(() => {});
    }
    try {
      reader.releaseLock();
    } catch {
      // a read still pending after an abort keeps the lock on some runtimes; cancel already freed the source
    }
  }
}

/**
 * Release a body a driver will not read (e.g. an append refused with
 * `conflict`), so that its source (a request body) is not left hanging.
 */
export function discard(body: StorageBody): void {
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
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
