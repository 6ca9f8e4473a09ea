/**
 * Event and request ids: unique across processes and restarts without a
 * random draw per id (two `crypto.randomUUID()` per pull were a tenth of what
 * an event cost).
 *
 * An id is a UUID of version 8 (RFC 9562, "custom"), so receivers that check
 * the UUID syntax still accept it: 74 random bits drawn once per id space
 * (a process, on first use), then a 48-bit counter. Ids of one space differ
 * in the counter; the space is drawn afresh before the counter would wrap.
 * Two spaces (two processes, or one process before and after a restart)
 * share ids only if their 74 random bits are equal: for a million process
 * lifetimes, a chance below 10^-10.
 *
 * @module
 */

const COUNTER_LIMIT = 2 ** 48;

/** `0-9a-f` as ASCII codes. */
const HEX = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/**
 * `n` (below 2^48) as 12 lower-case hex digits, zero-padded, written into
 * `out` at `at`; returns the offset after them. Exported for its test.
 */
export function counterInto(out: Uint8Array, at: number, n: number): number {
  // Two halves of 24 bits: bitwise operators work on 32.
  const low = n % HALF;
  return halvesInto(out, at, (n - low) / HALF, low);
}

/** A counter's two 24-bit halves: kept as integers, they are written without floating-point division. */
export const HALF = 0x1000000;

/** {@link counterInto} for the counter `high * 2^24 + low` given as its halves. */
export function halvesInto(out: Uint8Array, at: number, high: number, low: number): number {
  for (let i = at + 11; i > at + 5; i--, low >>>= 4) out[i] = HEX[low & 15]!;
  for (let i = at + 5; i >= at; i--, high >>>= 4) out[i] = HEX[high & 15]!;
  return at + 12;
}

/** A source of unique ids (one per process is enough; tests make several to compare them). */
export class IdSpace {
  readonly #limit: number;
  #prefix = "";
  /** `#prefix` as ASCII bytes, for ids written straight into an outbox line. */
  #prefixBytes = new Uint8Array(0);
  #counter: number;

  /** @param counterLimit - ids per draw; 2^48 (tests use small ones to see a redraw). */
  constructor(counterLimit = COUNTER_LIMIT) {
    this.#limit = Math.min(counterLimit, COUNTER_LIMIT);
    this.#counter = this.#limit;
  }

  /** The next id: `xxxxxxxx-xxxx-8xxx-yxxx-cccccccccccc` (x random, y the variant, c the counter in hex). */
  next(): string {
    if (this.#counter >= this.#limit) this.#draw();
    const n = this.#counter++;
    return this.#prefix + n.toString(16).padStart(12, "0");
  }

  /**
   * The next id as its parts, without making a string: returns its counter;
   * {@link prefixBytes}, read after this call, is the 24 ASCII bytes before
   * it. The id `next` would have returned is the prefix and the counter as
   * 12 hex digits ({@link counterInto}). An event kept in memory holds these
   * two and is written out later, with the same id every time.
   */
  take(): number {
    if (this.#counter >= this.#limit) this.#draw();
    return this.#counter++;
  }

  /** The first 24 ASCII bytes of the ids drawn since the last draw (see {@link take}). */
  get prefixBytes(): Uint8Array {
    return this.#prefixBytes;
  }

  /** The first 24 characters of every id until the next draw. */
  #draw(): void {
    const r = crypto.getRandomValues(new Uint8Array(10));
    r[6] = 0x80 | (r[6]! & 0x0f); // version 8
    r[8] = 0x80 | (r[8]! & 0x3f); // variant 10
    const hex = Array.from(r, (b) => b.toString(16).padStart(2, "0")).join("");
    this.#prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-`;
    this.#prefixBytes = Uint8Array.from(this.#prefix, (c) => c.charCodeAt(0));
    this.#counter = 0;
  }
}

/** Drawn on first use: workerd refuses random values at module scope. */
let shared: IdSpace | undefined;

/** The next id of this process's id space. */
export function nextId(): string {
  return (shared ??= new IdSpace()).next();
}

/** {@link IdSpace.take} on this process's id space. */
export function takeId(): number {
  return (shared ??= new IdSpace()).take();
}

/** {@link IdSpace.prefixBytes} of this process's id space (read after {@link takeId}). */
export function idPrefix(): Uint8Array {
  return (shared ??= new IdSpace()).prefixBytes;
}
