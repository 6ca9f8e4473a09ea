/**
 * A Node request body as a WHATWG `ReadableStream`, with real backpressure:
 * the socket is paused whenever the stream's queue is full, so a slow
 * consumer never makes the process buffer a whole upload.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import { markOwnedChunks } from "../runtime/adapter-capabilities.js";
import { bytesReleased } from "../util/owned-chunks.js";
import { collectIfGrown } from "./old-generation.js";

/** Bytes queued in the web stream before the socket is paused. */
const MAX_QUEUED = 256 * 1024;

/** Body bytes received per body being received between two young-generation collections (see {@link received}). */
const COLLECT_EVERY = 4 * 1024 * 1024;

type Collect = (options: { type: "minor" }) => void;
/** V8's `gc()`, there only when Node was started with `--expose-gc`. */
const collect = (globalThis as { gc?: unknown }).gc as Collect | undefined;
const canCollect = typeof collect === "function";
/** Request bodies being received now (first chunk seen, not yet ended or abandoned). */
let receiving = 0;
let sinceCollect = 0;
/** `bytesReleased()` when {@link received} last looked. */
let releasedBefore = 0;

/**
 * Count `bytes` of request body received (only when Node exposes `gc`) and
 * run a young-generation collection every {@link COLLECT_EVERY} bytes per body
 * being received.
 *
 * Node's HTTP parser hands each body chunk over in a fresh 64 KiB buffer of
 * its own, freed only when V8's next scavenge finds it dead; V8 forces that
 * scavenge only once 32 MiB of such young buffers are waiting (a fixed rule,
 * whatever the semi-space size). During an upload that is up to 32 MiB of
 * resident memory holding bytes already hashed and written. A scavenge of a
 * young generation holding little alive takes 0.2-0.9 ms here; one per 4 MiB
 * costs ~50 ms a GiB. The interval grows with the bodies in flight: a chunk
 * lives while the next ~2.3 MiB of its body arrive (the stream's queue, the
 * write batch, the write in flight), and one that outlived two scavenges
 * would be promoted to the old generation, where only a full collection
 * frees it. Bytes their consumer freed once stored (the fs driver frees an
 * HTTP/1 body's chunks as soon as they are written, util/owned-chunks.ts) are
 * not counted: a body stored on disk costs no collection.
 */
function received(bytes: number): void {
  sinceCollect += bytes;
  const every = COLLECT_EVERY * Math.max(1, receiving);
  if (sinceCollect < every) return;
  // Chunks the fs driver freed once written (util/owned-chunks.ts) wait for no collection.
  const released = bytesReleased();
  sinceCollect = Math.max(0, sinceCollect - (released - releasedBefore));
  releasedBefore = released;
  if (sinceCollect >= every) {
    sinceCollect = 0;
    collect!({ type: "minor" });
  }
  // What the scavenges of a transfer promote is freed only by a full collection, which V8 puts off until the old
  // generation reaches `--initial-old-space-size`, and a transfer makes too few requests for the listener's look
  // every 1024 of them: the same bound is checked here (old-generation.ts).
  collectIfGrown();
}

/**
 * Wrap `req` in a byte stream. `onFirstPull` runs once, when the consumer
 * first asks for data (used to send a deferred `100 Continue`). Cancelling
 * the stream discards the rest of the body instead of destroying the socket,
 * so the handler's response can still be written.
 */
export function incomingBody(req: IncomingMessage, onFirstPull?: () => void): ReadableStream<Uint8Array> {
  const stream = bodyStream(req, onFirstPull);
  // HTTP/1's parser copies each chunk into a buffer of its own that Node keeps no hold on, so the reader may free
  // it once used (util/owned-chunks.ts). HTTP/2's chunks may share a buffer the session still reads into; Bun's
  // and Deno's node:http make no such promise.
  return req.httpVersionMajor === 1 && isNode ? markOwnedChunks(stream) : stream;
}

/** Node itself, not a runtime's node:http compatibility layer. */
const isNode = typeof process !== "undefined" && process.versions?.bun === undefined && process.versions?.deno === undefined && process.release?.name === "node";

function bodyStream(req: IncomingMessage, onFirstPull?: () => void): ReadableStream<Uint8Array> {
  let pulled = false;
  let settled = false;
  let counted = false;
  const cleanup = (): void => {
    settled = true;
    if (counted) receiving--;
    counted = false;
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("close", onClose);
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Buffer): void => {
    if (canCollect) {
      if (!counted && !settled) {
        counted = true;
        receiving++;
      }
      received(chunk.byteLength);
    }
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
