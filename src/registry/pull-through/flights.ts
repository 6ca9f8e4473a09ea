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
  readonly #running = new Map<string, Promise<void>>();

  /** The fetch under way for `key`, if any. */
  get(key: string): Promise<void> | undefined {
    return this.#running.get(key);
  }

  /** Run `fn` as the flight of `key` (the caller checked there was none) and forget it once settled. */
  start(key: string, fn: () => Promise<void>): Promise<void> {
    const flight = fn().finally(() => this.#running.delete(key));
    this.#running.set(key, flight);
    // Followers and the leader observe the outcome; nobody may leave it unhandled.
    flight.catch(() => {});
    return flight;
  }
}

