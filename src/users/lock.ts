/**
 * A tiny in-process mutex: callers queue and run one at a time.
 *
 * @module
 */

/** Runs the functions given to {@link Mutex.run} one after the other. */
export class Mutex {
  #tail: Promise<unknown> = Promise.resolve();

  /** Run `fn` once every earlier call has settled; resolves to its result. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => fn());
    this.#tail = result.catch(() => {});
    return result;
  }
}
