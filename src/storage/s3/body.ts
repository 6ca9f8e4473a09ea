/**
 * Cutting a {@link StorageBody} into pieces of at most `partSize` bytes, each
 * held in memory (as the chunks the source produced, without copying) so that
 * it can be sent with a `Content-Length` and sent again on a retry.
 *
 * @module
 */
import { concatBytes } from "../../util/bytes.js";
import { hasOwnedChunks } from "../../runtime/adapter-capabilities.js";
import { releaseChunks } from "../../util/owned-chunks.js";
import { StorageError, type StorageBody } from "../driver.js";
import type { BufferBudget } from "./budget.js";
import type { ReplayableBody } from "./client.js";

/** A buffered piece of a body. */
export interface Piece {
  chunks: Uint8Array[];
  length: number;
  /** Give the piece's buffer back to the reader's pool once it has been sent. */
  release(): void;
}

const noRelease = (): void => {};

/** Reads a body piece by piece. */
export class PieceReader {
  readonly #partSize: number;
  readonly #signal: AbortSignal | undefined;
  readonly #poolSize: number;
  readonly #budget: BufferBudget | undefined;
  #allocated = 0;
  readonly #free: Uint8Array[] = [];
  readonly #waiting: Array<(buffer: Uint8Array) => void> = [];
  #bytes: Uint8Array | undefined;
  #bytesOffset = 0;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #pending: Uint8Array | undefined;
  #done = false;
  /** Copied chunks are freed at once (a body whose chunks are its reader's: util/owned-chunks.ts). */
  readonly #releaseCopied: boolean;

  /**
   * With `poolSize`, stream bodies are copied into at most `poolSize` reusable
   * buffers of `partSize` bytes (allocated as needed), so that memory stays at
   * `poolSize × partSize` however long the body; `next()` waits for a released
   * buffer. Without it, pieces keep the source's chunks. With `budget`, every
   * buffer but the first is allocated only while the shared budget has room;
   * {@link PieceReader.dispose} gives them back.
   */
  constructor(body: StorageBody, partSize: number, signal?: AbortSignal, poolSize = 0, budget?: BufferBudget) {
    this.#partSize = partSize;
    this.#signal = signal;
    this.#poolSize = poolSize;
    this.#budget = budget;
    this.#releaseCopied = poolSize > 0 && hasOwnedChunks(body);
    if (body instanceof Uint8Array) this.#bytes = body;
    else this.#reader = body.getReader();
  }

  /** The next piece, or `undefined` at the end of the body. Only the last piece is shorter than `partSize`. */
  async next(): Promise<Piece | undefined> {
    this.#checkAborted();
    if (this.#bytes) {
      if (this.#bytesOffset >= this.#bytes.byteLength) {
        if (this.#bytesOffset === 0 && !this.#done) {
          this.#done = true;
          return { chunks: [], length: 0, release: noRelease };
        }
        return undefined;
      }
      const end = Math.min(this.#bytes.byteLength, this.#bytesOffset + this.#partSize);
      const chunk = this.#bytes.subarray(this.#bytesOffset, end);
      this.#bytesOffset = end;
      this.#done = true;
      return { chunks: [chunk], length: chunk.byteLength, release: noRelease };
    }
    if (this.#done && !this.#pending) return undefined;
    if (this.#poolSize > 0) return this.#nextPooled();
    const chunks: Uint8Array[] = [];
    let length = 0;
    while (length < this.#partSize) {
      const chunk = await this.#take(this.#partSize - length);
      if (!chunk) break;
      chunks.push(chunk);
      length += chunk.byteLength;
    }
    return { chunks, length, release: noRelease };
  }

  /**
   * The next non-empty chunk of the body, at most `room` bytes (the rest stays
   * pending for the next call), or `undefined` at the end of the body.
   */
  async #take(room: number): Promise<Uint8Array | undefined> {
    for (;;) {
      let chunk = this.#pending;
      this.#pending = undefined;
      if (!chunk) {
        if (this.#done) return undefined;
        chunk = await this.#read();
        if (!chunk) {
          this.#done = true;
          return undefined;
        }
      }
      if (chunk.byteLength === 0) continue;
      if (chunk.byteLength > room) {
        this.#pending = chunk.subarray(room);
        chunk = chunk.subarray(0, room);
      }
      return chunk;
    }
  }

  async #nextPooled(): Promise<Piece> {
    const buffer = await this.#acquire();
    let length = 0;
    try {
      while (length < this.#partSize) {
        const chunk = await this.#take(this.#partSize - length);
        if (!chunk) break;
        buffer.set(chunk, length);
        length += chunk.byteLength;
        if (this.#releaseCopied) releaseChunks([chunk]);
      }
    } catch (error) {
      this.#releaseBuffer(buffer);
      throw error;
    }
    let released = false;
    return {
      chunks: length ? [buffer.subarray(0, length)] : [],
      length,
      release: () => {
        if (!released) this.#releaseBuffer(buffer);
        released = true;
      },
    };
  }

  async #acquire(): Promise<Uint8Array> {
    const free = this.#free.pop();
    if (free) return free;
    if (this.#allocated === 0 && this.#budget) await this.#budget.take();
    if (this.#allocated < this.#poolSize && (this.#allocated === 0 || !this.#budget || this.#budget.tryTake())) {
      this.#allocated++;
      return this.#budget?.reuse(this.#partSize) ?? new Uint8Array(this.#partSize);
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #releaseBuffer(buffer: Uint8Array): void {
    const waiter = this.#waiting.shift();
    if (waiter) waiter(buffer);
    else this.#free.push(buffer);
  }

  /** True when nothing follows the pieces read so far (reads ahead one chunk). */
  async atEnd(): Promise<boolean> {
    if (this.#bytes) return this.#bytesOffset >= this.#bytes.byteLength;
    while (!this.#pending && !this.#done) {
      const chunk = await this.#read();
      if (!chunk) this.#done = true;
      else if (chunk.byteLength > 0) this.#pending = chunk;
    }
    return !this.#pending;
  }

  /**
   * Give this reader's buffers back to the budget; call once no piece of it
   * is in flight any more (after the write or append finished or failed).
   */
  dispose(): void {
    this.#budget?.give(this.#allocated, this.#free.splice(0));
    this.#allocated = 0;
  }

  /** Stop reading; cancels the source stream. */
  async cancel(reason?: unknown): Promise<void> {
    this.#done = true;
    this.#pending = undefined;
    if (this.#reader) {
      await this.#reader.cancel(reason).catch(() => {});
      this.#reader.releaseLock();
      this.#reader = undefined;
    }
  }

  async #read(): Promise<Uint8Array | undefined> {
    this.#checkAborted();
    let result: ReadableStreamReadResult<Uint8Array>;
    const signal = this.#signal;
    let onAbort: (() => void) | undefined;
    try {
      const reading = this.#reader!.read();
      result = signal
        ? await Promise.race([
            reading,
            new Promise<never>((_, reject) => {
              onAbort = () => reject(new StorageError("aborted", "write aborted", { cause: signal.reason }));
              signal.addEventListener("abort", onAbort, { once: true });
            }),
          ])
        : await reading;
    } catch (error) {
      if (error instanceof StorageError) throw error;
      throw new StorageError("io", "failed to read the body", { cause: error });
    } finally {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
    this.#checkAborted();
    return result.done ? undefined : result.value;
  }

  #checkAborted(): void {
    if (this.#signal?.aborted) throw new StorageError("aborted", "write aborted", { cause: this.#signal.reason });
  }
}

/** A request body for a piece: the bytes themselves, or a stream over its chunks that can be reopened. */
export function pieceBody(piece: Piece, contiguous: boolean): ReplayableBody {
  if (piece.chunks.length === 0) return new Uint8Array(0);
  if (contiguous) return piece.chunks.length === 1 ? piece.chunks[0]! : concat(piece);
  // Small bodies go as bytes; big ones as a stream of slices (fetch copies a bytes body whole).
  if (piece.chunks.length === 1 && piece.length <= STREAM_SLICE) return piece.chunks[0]!;
  return {
    length: piece.length,
    open: () => {
      let i = 0;
      let offset = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = piece.chunks[i];
          if (!chunk) return controller.close();
          const end = Math.min(chunk.byteLength, offset + STREAM_SLICE);
          controller.enqueue(chunk.subarray(offset, end));
          if (end === chunk.byteLength) {
            i++;
            offset = 0;
          } else offset = end;
        },
      }, { highWaterMark: 0 });
    },
  };
}

/** Slices of a buffered piece handed to fetch one at a time. */
const STREAM_SLICE = 4 * 1024 * 1024;

export function concat(piece: Piece): Uint8Array {
  return concatBytes(piece.chunks, piece.length);
}

