/**
 * A small bounded map for verified tokens, keyed by the exact token string.
 *
 * Eviction is "second chance" (CLOCK), an approximation of least recently
 * used: a hit only sets a flag, where a strict LRU would delete and re-insert
 * the entry, hashing a token of a kilobyte or more twice more on every
 * request. When the map is full, the oldest entry goes, unless it was used
 * since it was last looked at: then it moves to the back with its flag
 * cleared.
 *
 * @module
 */

interface Slot<V> {
  value: V;
  used: boolean;
}

/** A bounded map with second-chance eviction (see the module comment). */
export class LruCache<V> {
  readonly #map = new Map<string, Slot<V>>();
  constructor(readonly capacity: number) {}

  /** The value for `key`, marking it used. */
  get(key: string): V | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.value;
  }

  set(key: string, value: V): void {
    if (this.capacity <= 0) return;
    this.#map.delete(key);
    this.#map.set(key, { value, used: false });
    while (this.#map.size > this.capacity) {
      const [oldest, slot] = this.#map.entries().next().value as [string, Slot<V>];
      this.#map.delete(oldest);
      // Used since it was last looked at (or the entry just added): keep it, at the back.
      if (slot.used || oldest === key) {
        slot.used = false;
        this.#map.set(oldest, slot);
      }
    }
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
