/**
 * An event's timestamp: now in RFC 3339 (`Date#toISOString`), formatted once
 * per millisecond, since a busy registry has many events in one; as a string
 * for an event object and as ASCII bytes for an outbox line.
 *
 * @module
 */

let lastMs = -1;
let lastTimestamp = "";
let lastBytes = new Uint8Array(0);
/** The first millisecond of the second `lastBytes` is in, while that second is written only with its last 3 digits differing. */
let secondStart = NaN;

/** The first and last milliseconds of the years 0 to 9999, whose timestamps have 24 characters (27 outside them). */
const FIRST_SHORT = new Date(0).setUTCFullYear(0, 0, 1);
const LAST_SHORT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function refresh(now: number): void {
  lastMs = now;
  lastTimestamp = new Date(now).toISOString();
  // A loop, not Uint8Array.from(string, …): that one walks the string through an iterator, an object per character.
  lastBytes = new Uint8Array(lastTimestamp.length);
  for (let i = 0; i < lastTimestamp.length; i++) lastBytes[i] = lastTimestamp.charCodeAt(i);
  secondStart = Math.floor(now / 1000) * 1000;
}

/** Now in RFC 3339. */
export function timestampNow(): string {
  const now = Date.now();
  // An empty string: the bytes were last written over, not the string.
  if (now !== lastMs || lastTimestamp === "") refresh(now);
  return lastTimestamp;
}

/**
 * The time `ms` (milliseconds since the epoch) in RFC 3339 as ASCII bytes: 24
 * of them until the year 10000, 27 after. The bytes are valid until the next
 * call: within one second only the milliseconds' digits are written over
 * (events are written in the order they happened, many in one second).
 */
export function timestampBytesAt(ms: number): Uint8Array {
  if (ms === lastMs) return lastBytes;
  const inSecond = ms - secondStart;
  if (inSecond >= 0 && inSecond < 1000 && Number.isInteger(ms)) {
    // `…:SS.mmmZ`: the three digits before the Z.
    const at = lastBytes.length - 4;
    lastBytes[at] = 0x30 + Math.floor(inSecond / 100);
    lastBytes[at + 1] = 0x30 + (Math.floor(inSecond / 10) % 10);
    lastBytes[at + 2] = 0x30 + (inSecond % 10);
    lastMs = ms;
    lastTimestamp = "";
    return lastBytes;
  }
  refresh(ms);
  return lastBytes;
}

/** The length of {@link timestampBytesAt}'s answer for `ms`, without formatting it. */
export function timestampLength(ms: number): number {
  return ms >= FIRST_SHORT && ms <= LAST_SHORT ? 24 : 27;
}
