/**
 * Body chunks that are freed as soon as they are stored, instead of when the
 * garbage collector next finds them dead.
 *
 * Node's HTTP/1 parser hands each request-body chunk over in a fresh buffer
 * of its own (up to 64 KiB, from the C heap). Such a buffer is freed only by
 * the V8 collection that finds its object dead, so during an upload several
 * MiB of bytes already hashed and written wait in memory, and the C heap
 * they were taken from keeps its high-water mark. A stream marked with
 * `markOwnedChunks` (src/runtime/adapter-capabilities.ts, where the adapter's
 * speed paths are declared) promises that every chunk it yields is held by
 * nobody but its reader; the reader that consumes a chunk last (the fs
 * driver, once the chunk's bytes are written) frees it at once with
 * {@link releaseChunks}. A chunk released is detached: its length becomes 0.
 *
 * @module
 */

let released = 0;

/** Bytes freed by {@link releaseChunks} in this process so far. */
export function bytesReleased(): number {
  return released;
}

type Transfer = (this: ArrayBuffer, newLength?: number) => ArrayBuffer;
/** `ArrayBuffer.prototype.transfer` (ES2024: Node 22+, Bun, Deno); detaching with it frees the old memory at once. */
const transfer = (ArrayBuffer.prototype as { transfer?: Transfer }).transfer;
/**
 * Where `transfer` is missing (Node 20): a message port closed at birth. A
 * message posted on it is dropped once its transfer list is detached, which
 * frees the buffers' memory at once. `null`: no `MessageChannel` either.
 */
let closedPort: { postMessage(message: unknown, transfer: ArrayBuffer[]): void } | null | undefined;

function openClosedPort(): typeof closedPort {
  if (typeof MessageChannel !== "function") return null;
  const { port1 } = new MessageChannel();
  port1.close();
  return port1;
}

/**
 * Free the buffers of `chunks` now (each must be done with: written, copied).
 * Only a chunk that is the whole of its buffer is freed; one that shares its
 * buffer, or a buffer that cannot be detached, is left to the collector.
 */
export function releaseChunks(chunks: readonly Uint8Array[]): void {
  const buffers: ArrayBuffer[] = [];
  const sizes: number[] = [];
  for (const chunk of chunks) {
    const buffer = chunk.buffer;
    if (chunk.byteOffset !== 0 || chunk.byteLength === 0 || chunk.byteLength !== buffer.byteLength || !(buffer instanceof ArrayBuffer)) continue;
    buffers.push(buffer);
    sizes.push(buffer.byteLength);
  }
  if (buffers.length === 0) return;
  if (transfer) {
    for (const buffer of buffers) {
      try {
        transfer.call(buffer, 0);
      } catch {
        // not detachable: the collector frees it
      }
    }
  } else {
    closedPort ??= openClosedPort();
    if (!closedPort) return;
    try {
      closedPort.postMessage(null, buffers);
    } catch {
      // one of them cannot be transferred: the collector frees them
    }
  }
  // Counted by what was detached: a buffer Node marked untransferable is skipped by some versions, refused by others.
  for (let i = 0; i < buffers.length; i++) if (buffers[i]!.byteLength === 0) released += sizes[i]!;
}
