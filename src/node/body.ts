/**
 * A Node request body as a WHATWG `ReadableStream`, with real backpressure:
 * the socket is paused whenever the stream's queue is full, so a slow
 * consumer never makes the process buffer a whole upload.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";

/** Bytes queued in the web stream before the socket is paused. */
const MAX_QUEUED = 256 * 1024;

/**
 * Wrap `req` in a byte stream. `onFirstPull` runs once, when the consumer
 * first asks for data (used to send a deferred `100 Continue`). Cancelling
 * the stream discards the rest of the body instead of destroying the socket,
 * so the handler's response can still be written.
 */
export function incomingBody(req: IncomingMessage, onFirstPull?: () => void): ReadableStream<Uint8Array> {
  let pulled = false;
  let settled = false;
  const cleanup = (): void => {
    settled = true;
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("close", onClose);
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Buffer): void => {
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    // High-water mark 0 (below): pull() runs only when a reader is waiting, so
    // the first pull really means "the handler wants the body". The queue may
    // still grow to MAX_QUEUED bytes before the socket is paused.
    if ((controller.desiredSize ?? 0) <= -MAX_QUEUED) req.pause();
  };
  const onEnd = (): void => {
    cleanup();
    controller.close();
  };
  const onError = (error: Error): void => {
    cleanup();
    controller.error(error);
  };
  const onClose = (): void => {
    // HTTP/2 counts a reset stream as `complete`; its `aborted` tells the difference.
    if (!settled && (!req.complete || (req as { aborted?: boolean }).aborted === true)) {
      onError(new Error("client closed the connection before the body was complete"));
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        req.pause();
        req.on("data", onData);
        req.on("end", onEnd);
        req.on("error", onError);
        req.on("close", onClose);
      },
      pull() {
        if (!pulled) {
          pulled = true;
          onFirstPull?.();
        }
        req.resume();
      },
      cancel() {
        cleanup();
        req.resume(); // discard the rest; Node keeps the connection usable
      },
    },
    { highWaterMark: 0, size: (chunk) => chunk.byteLength },
  );
}
