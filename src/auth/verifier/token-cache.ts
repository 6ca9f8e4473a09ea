/**
 * A small bounded map for verified tokens, keyed by the exact token string.
 *
 * The map itself is keyed by the key's last {@link TAIL} characters (of a
 * token, its signature) and each slot keeps the whole key, compared on every
 * access: a token arrives as a fresh string each request, and hashing its
 * kilobyte cost about 1.5 µs a lookup where the tail costs a tenth. Another
 * key with the same tail is a miss, never a hit, and does not disturb the
 * entry (its verification decides; a verified one then replaces it).
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
  key: string;
  value: V;
  used: boolean;
}

/** How many trailing characters of a key the map hashes. */
const TAIL = 32;
const tailOf = (key: string): string => (key.length > TAIL ? key.slice(-TAIL) : key);

/** A bounded map with second-chance eviction (see the module comment). */
export class LruCache<V> {
  readonly #map = new Map<string, Slot<V>>();
  constructor(readonly capacity: number) {}

  /** The value for `key`, marking it used. */
  get(key: string): V | undefined {
    const slot = this.#map.get(tailOf(key));
    if (slot === undefined || slot.key !== key) return undefined;
    slot.used = true;
    return slot.value;
  }

  set(key: string, value: V): void {
    if (this.capacity <= 0) return;
    const tail = tailOf(key);
    this.#map.delete(tail);
    this.#map.set(tail, { key, value, used: false });
    while (this.#map.size > this.capacity) {
      const [oldest, slot] = this.#map.entries().next().value as [string, Slot<V>];
      this.#map.delete(oldest);
      // Used since it was last looked at (or the entry just added): keep it, at the back.
      if (slot.used || oldest === tail) {
        slot.used = false;
        this.#map.set(oldest, slot);
      }
    }
  }

  delete(key: string): void {
    const tail = tailOf(key);
    if (this.#map.get(tail)?.key === key) this.#map.delete(tail);
  }

  get size(): number {
    return this.#map.size;
  }
}
