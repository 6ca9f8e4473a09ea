/**
 * The memory budget of one S3 driver: how many part buffers its writes and
 * appends may hold at once, all together. Each write or append may hold up to
 * `concurrency + 1` buffers of `partSize` bytes (parts in flight while the next
 * one fills); the budget caps the sum over every write of the driver, so that
 * many parallel pushes slow down rather than grow the process.
 *
 * A writer always gets its first buffer (it waits for one), and takes more
 * only while the budget has room; otherwise it reuses its own. So every writer
 * makes progress and none waits on another's second buffer.
 *
 * Buffers a finished writer gives back are kept for the next one (a chunked
 * push makes a writer per PATCH): no new 8 MiB allocations per PATCH for the
 * garbage collector to find later. Kept buffers are dropped after a few idle
 * seconds, so a registry at rest does not hold them.
 *
 * @module
 */

/** How long kept buffers outlive the last write, in ms. */
const IDLE_MS = 5_000;

/** Buffers shared by the writes of one driver. */
export class BufferBudget {
  #free: number;
  readonly #total: number;
  readonly #waiting: Array<() => void> = [];
  readonly #kept: Uint8Array[] = [];
  #idle: ReturnType<typeof setTimeout> | undefined;

  /** A budget of `buffers` part buffers (at least one). */
  constructor(buffers: number) {
    this.#free = Math.max(1, buffers);
    this.#total = this.#free;
  }

  /** Take a buffer if one is free now. */
  tryTake(): boolean {
    if (this.#free === 0) return false;
    this.#free--;
    return true;
  }

  /** Take a buffer, waiting for one to be given back. */
  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** A buffer a finished writer gave back, of `size` bytes, if one is kept. */
  reuse(size: number): Uint8Array | undefined {
    const buffer = this.#kept.pop();
    return buffer?.byteLength === size ? buffer : undefined;
  }

  /** Give `count` buffers back, keeping `buffers` (theirs, now unused) for the next writer. */
  give(count = 1, buffers: Uint8Array[] = []): void {
    for (const buffer of buffers) if (this.#kept.length < this.#total) this.#kept.push(buffer);
    if (this.#kept.length > 0) {
      if (this.#idle !== undefined) clearTimeout(this.#idle);
      this.#idle = setTimeout(() => (this.#kept.length = 0), IDLE_MS);
      (this.#idle as { unref?: () => void }).unref?.();
    }
    for (let i = 0; i < count; i++) {
      const waiter = this.#waiting.shift();
      if (waiter) waiter();
      else this.#free++;
    }
  }
}
