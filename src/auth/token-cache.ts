/**
 * A small LRU map for verified tokens, keyed by the exact token string.
 *
 * @module
 */

/** A bounded least-recently-used map. */
export class LruCache<V> {
  readonly #map = new Map<string, V>();
  constructor(readonly capacity: number) {}

  /** The value for `key`, marking it most recently used. */
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  set(key: string, value: V): void {
    if (this.capacity <= 0) return;
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value!);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
