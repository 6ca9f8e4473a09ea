/**
 * Runtime-neutral helpers for drivers that consume a {@link StorageBody}.
 * The generic helpers (`discard`, `streamOf`, `readAll`) live in
 * `src/util/streams.ts` and are re-exported here for drivers.
 *
 * They give every driver the same rules for the failure cases the contract
 * suite checks: an abort signal wins even while the body is stalled, the body
 * is cancelled when the driver stops early, and a body's own error reaches the
 * caller as the `cause` of a `StorageError("io")`.
 *
 * @module
 */
import { StorageError, type StorageBody } from "./driver.js";

export { discard, readAll, streamOf } from "../util/streams.js";

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

/** A stream over `sources` one after the other, each opened only when the previous one ends. */
export function concatStreams(sources: Array<() => Promise<ReadableStream<Uint8Array>>>): ReadableStream<Uint8Array> {
  let index = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (!reader) {
          const open = sources[index++];
          if (!open) return controller.close();
          reader = (await open()).getReader();
        }
        const { done, value } = await reader.read();
        if (!done) {
          if (value.byteLength > 0) return controller.enqueue(value);
          continue;
        }
        reader.releaseLock();
        reader = undefined;
      }
    },
    async cancel(reason) {
      await reader?.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
}

/** An empty stream. */
export function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({ start: (c) => c.close() });
}
