/**
 * Bodies and byte helpers the contract tests feed to a driver: bodies of many
 * parts, slow, held mid-way or failing, and the collection of a read stream.
 *
 * @module
 */
import { expect } from "vitest";
import { concatBytes } from "../../util/bytes.js";

export const MiB = 1024 * 1024;
export const encoder = new TextEncoder();
export const decoder = new TextDecoder();

/**
 * `size` random bytes, filled 64 KiB at a time: WebCrypto's limit per call,
 * which workerd enforces (node:crypto's `randomBytes` there too).
 */
export function randomBytes(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(size, i + 65536)));
  return out;
}

/** Read a stream to its end, checking that every chunk is a `Uint8Array`. */
export async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of streamIterator(stream)) {
    expect(chunk).toBeInstanceOf(Uint8Array);
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  return concatBytes(chunks, size);
}

async function* streamIterator(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** A body that delivers `parts`, one per pull. */
export function streamOfParts(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else controller.close();
    },
  });
}

/** Like {@link streamOfParts}, but each chunk after a macrotask, so concurrent writers interleave. */
export function slowStream(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((r) => setTimeout(r, 1));
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else controller.close();
    },
  });
}

/**
 * A body that delivers `first`, then holds until `release()` before delivering
 * `rest`: an upload whose request body stalls mid-way. `started` resolves once
 * the driver has taken `first` and asked for more.
 */
export function heldStream(first: Uint8Array, rest: Uint8Array): { stream: ReadableStream<Uint8Array>; started: Promise<void>; release: () => void } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const startedPromise = new Promise<void>((r) => (started = r));
  let step = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        step++;
        if (step === 1) controller.enqueue(first);
        else if (step === 2) {
          started();
          await gate;
          controller.enqueue(rest);
        } else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  // A driver that buffers a whole piece before writing asks for more at once; give it a moment.
  return { stream, started: startedPromise.then(() => new Promise((r) => setTimeout(r, 20))), release };
}

/** Delivers `parts`, then errors with `error`. */
export function failingStream(parts: Uint8Array[], error: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((r) => setTimeout(r, 1));
      const part = parts[i++];
      if (part) controller.enqueue(part);
      else controller.error(error);
    },
  });
}

/** `data` cut into `count` parts (the last may be shorter). */
export function split(data: Uint8Array, count: number): Uint8Array[] {
  const size = Math.ceil(data.byteLength / count);
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < data.byteLength; offset += size) parts.push(data.subarray(offset, offset + size));
  return parts;
}
