/**
 * The outbox's bytes: one event per line, as the JSON a webhook receives
 * (event-json.ts), and envelopes assembled from stored lines without parsing
 * them again.
 *
 * An event is serialized once, when it is stored (or sent from memory,
 * pending-events.ts); delivery of a stored object only cuts it into lines and
 * joins up to a batch of them between `{"events":[` and `]}`.
 *
 * @module
 */

const encoder = new TextEncoder();
const NEWLINE = 0x0a;
const OPEN = encoder.encode('{"events":[');
const CLOSE = encoder.encode("]}");
const COMMA = 0x2c;

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
