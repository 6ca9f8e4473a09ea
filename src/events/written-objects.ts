/**
 * The outbox objects a process wrote, kept in memory up to a number of bytes
 * so that its own delivery pass need not read back what it just wrote.
 *
 * @module
 */
import type { ObjectLines } from "./outbox-format.js";

/** Objects by key, their bytes counted against a bound; one that does not fit is simply not kept. */
export class WrittenObjects {
  readonly #limit: number;
  readonly #objects = new Map<string, ObjectLines>();
  #bytes = 0;

  /** @param limit - most bytes kept. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Keep `lines` as the object `key`, if they fit. */
  keep(key: string, lines: ObjectLines): void {
    if (this.#bytes + lines.bytes.length > this.#limit) return;
    this.forget(key);
    this.#objects.set(key, lines);
    this.#bytes += lines.bytes.length;
  }

  /** The lines kept for `key`, if any. */
  get(key: string): ObjectLines | undefined {
    return this.#objects.get(key);
  }

  /** Drop the object `key` (it was delivered). */
  forget(key: string): void {
    const lines = this.#objects.get(key);
    if (lines === undefined) return;
    this.#objects.delete(key);
    this.#bytes -= lines.bytes.length;
  }

  /** Drop everything (another process may deliver these objects now). */
  clear(): void {
    this.#objects.clear();
    this.#bytes = 0;
  }
}
