/**
 * The pull-through cache's in-process single flights.
 *
 * @module
 */

/**
 * Fetches under way in this process, by key, so that concurrent pulls of one
 * missing object make one upstream request: the first caller runs it, the
 * others wait for it and then read what it stored. Only a saving: another
 * process sharing the storage makes its own request (rule 5 holds).
 */
export class Flights {
  readonly #running = new Map<string, Promise<unknown>>();

  /** The fetch under way for `key`, if any (to wait for it: what it stored is read from storage). */
  get(key: string): Promise<void> | undefined {
    return this.#running.get(key) as Promise<void> | undefined;
  }

  /** Run `fn` as the flight of `key` (the caller checked there was none) and forget it once settled. */
  start<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const flight = fn().finally(() => this.#running.delete(key));
    this.#running.set(key, flight);
    // Followers and the leader observe the outcome; nobody may leave it unhandled.
    flight.catch(() => {});
    return flight;
  }

  /**
   * The answer of the flight of `key` under way, or of `fn` run as it: for
   * questions whose answer is shared rather than stored (a blob `HEAD`).
   * Each key is used for one kind of answer only.
   */
  join<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return (this.#running.get(key) as Promise<T> | undefined) ?? this.start(key, fn);
  }
}
