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
 * @module
 */

/** Buffers shared by the writes of one driver. */
export class BufferBudget {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  /** A budget of `buffers` part buffers (at least one). */
  constructor(buffers: number) {
    this.#free = Math.max(1, buffers);
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

  /** Give `count` buffers back. */
  give(count = 1): void {
    for (let i = 0; i < count; i++) {
      const waiter = this.#waiting.shift();
      if (waiter) waiter();
      else this.#free++;
    }
  }
}
