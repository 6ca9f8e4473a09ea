/**
 * The outbox's bytes: one event per line, as the JSON a webhook receives
 * (event-json.ts), and envelopes assembled from stored lines without parsing
 * them again.
 *
 * An event is serialized once, when it is recorded; delivery only cuts the
 * stored object into lines and joins up to a batch of them between
 * `{"events":[` and `]}`.
 *
 * @module
 */

const encoder = new TextEncoder();
const NEWLINE = 0x0a;
const OPEN = encoder.encode('{"events":[');
const CLOSE = encoder.encode("]}");
const COMMA = 0x2c;

/**
 * Event lines as they come, in one growing buffer (outside the JavaScript
 * heap, so that a second of pulls held for the next write costs the garbage
 * collector nothing).
 */
export class LineBuffer {
  #bytes = new Uint8Array(64 * 1024);
  #size = 0;
  #starts: number[] = [];
  #ends: number[] = [];
  #since = 0;
  /** An array given back by `recycle`, used by the next `takeFirst`. */
  #spare: Uint8Array<ArrayBuffer> | undefined;

  /** Bytes held. */
  get size(): number {
    return this.#size;
  }

  /** Lines held. */
  get count(): number {
    return this.#starts.length;
  }

  /** When the oldest line held was pushed (`Date.now()`). */
  get since(): number {
    return this.#since;
  }

  /** Add `line` (an event's JSON, which holds no newline) and a newline. */
  push(line: Uint8Array): void {
    const needed = this.#size + line.length + 1;
    if (needed > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(needed, this.#bytes.length * 2));
      grown.set(this.#bytes.subarray(0, this.#size));
      this.#bytes = grown;
    }
    if (this.#starts.length === 0) this.#since = Date.now();
    this.#bytes.set(line, this.#size);
    this.#starts.push(this.#size);
    this.#size += line.length;
    this.#ends.push(this.#size);
    this.#bytes[this.#size++] = NEWLINE;
  }

  /** The lines held (their bytes are an outbox object, in an array of their own), and empty the buffer. */
  take(): ObjectLines & { bytes: Uint8Array<ArrayBuffer> } {
    const taken = { bytes: this.#bytes.slice(0, this.#size), starts: this.#starts, ends: this.#ends };
    this.#size = 0;
    this.#starts = [];
    this.#ends = [];
    return taken;
  }

  /**
   * The first `count` lines held, without copying them: their bytes are a view
   * of the buffer's array, which the buffer gives up (it goes on in its spare
   * one, or a new one, with the lines after `count`). Give the array back with
   * {@link recycle} once nothing reads the view any more. The lines kept stay
   * as old as the oldest taken for {@link since}: a bound met early, never late.
   */
  takeFirst(count: number): ObjectLines & { bytes: Uint8Array<ArrayBuffer> } {
    const all = count >= this.#starts.length;
    const cut = all ? this.#size : this.#starts[count]!;
    const taken = { bytes: this.#bytes.subarray(0, cut), starts: all ? this.#starts : this.#starts.slice(0, count), ends: all ? this.#ends : this.#ends.slice(0, count) };
    const rest = this.#size - cut;
    const spare = this.#spare;
    const next = spare !== undefined && spare.length >= rest ? spare : new Uint8Array(Math.max(64 * 1024, this.#bytes.length));
    this.#spare = undefined;
    next.set(this.#bytes.subarray(cut, this.#size));
    this.#starts = all ? [] : this.#starts.slice(count).map((at) => at - cut);
    this.#ends = all ? [] : this.#ends.slice(count).map((at) => at - cut);
    this.#bytes = next;
    this.#size = rest;
    return taken;
  }

  /** Take back an array that {@link takeFirst} gave out, once its lines were sent. */
  recycle(bytes: Uint8Array<ArrayBuffer>): void {
    if (this.#spare === undefined && bytes.buffer !== this.#bytes.buffer) this.#spare = new Uint8Array(bytes.buffer);
  }
}

/**
 * The event lines of a stored object: line `i` is `bytes[starts[i]..ends[i])`
 * (without its newline). Offsets rather than a view per line: an object holds
 * thousands of pulls, and delivery copies runs of them at once.
 */
export interface ObjectLines {
  bytes: Uint8Array;
  starts: number[];
  ends: number[];
}

/**
 * The event lines of a stored object. An object written by an earlier
 * version (a JSON array of events) is read too. Lines that cannot be an
 * event's JSON (not `{…}`) are left out and counted in `skipped`.
 */
export function decodeLines(bytes: Uint8Array): ObjectLines & { skipped: number } {
  if (bytes[0] === 0x5b /* [ */) {
    const events = JSON.parse(new TextDecoder().decode(bytes)) as unknown[];
    return decodeLines(encoder.encode(events.map((event) => `${JSON.stringify(event)}\n`).join("")));
  }
  const starts: number[] = [];
  const ends: number[] = [];
  let skipped = 0;
  for (let start = 0; start < bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      if (bytes[start] === 0x7b /* { */ && bytes[end - 1] === 0x7d /* } */) {
        starts.push(start);
        ends.push(end);
      } else {
        skipped++;
      }
    }
    start = end + 1;
  }
  return { bytes, starts, ends, skipped };
}

/** Lines `from` to `to` (excluded) of an object: a part of an envelope. */
export interface LineRange {
  lines: ObjectLines;
  from: number;
  to: number;
}

/**
 * The body of one webhook POST: `{"events":[` the lines of `ranges`,
 * comma-separated, `]}`. Lines that follow each other in their object are
 * copied as one run, their newlines then overwritten by commas.
 */
export function envelope(ranges: readonly LineRange[]): Uint8Array<ArrayBuffer> {
  let size = OPEN.length + CLOSE.length;
  let count = 0;
  for (const { lines, from, to } of ranges) {
    for (let i = from; i < to; i++) size += lines.ends[i]! - lines.starts[i]!;
    count += to - from;
  }
  size += Math.max(0, count - 1);
  const body = new Uint8Array(size);
  body.set(OPEN, 0);
  let at = OPEN.length;
  for (const { lines, from, to } of ranges) {
    const { bytes, starts, ends } = lines;
    for (let i = from; i < to; ) {
      let last = i;
      while (last + 1 < to && ends[last]! + 1 === starts[last + 1]!) last++;
      if (at > OPEN.length) body[at++] = COMMA;
      const base = starts[i]!;
      body.set(bytes.subarray(base, ends[last]!), at);
      for (let j = i; j < last; j++) body[at + ends[j]! - base] = COMMA;
      at += ends[last]! - base;
      i = last + 1;
    }
  }
  body.set(CLOSE, at);
  return body;
}
