/**
 * The keys this driver appended to lately, so that `stat` and `read` of an
 * upload in progress go straight to the listing that finds its part objects,
 * rather than first asking for a plain object that is known not to be there
 * (a `HEAD` answering 404 before every PATCH of an upload).
 *
 * Only a hint for choosing the first request: a key missing from it (another
 * process appended, or it was forgotten) costs that one request more, and a key
 * in it that holds a plain object is still found by the listing.
 *
 * @module
 */

/** Keys remembered at most (a few hundred bytes each). */
const MAX_KEYS = 4096;

/** A bounded set of driver keys, oldest forgotten first. */
export class RecentAppends {
  readonly #keys = new Set<string>();

  add(key: string): void {
    this.#keys.delete(key);
    this.#keys.add(key);
    if (this.#keys.size > MAX_KEYS) this.#keys.delete(this.#keys.values().next().value!);
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  forget(key: string): void {
    this.#keys.delete(key);
  }
}
