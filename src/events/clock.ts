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

function refresh(now: number): void {
  lastMs = now;
  lastTimestamp = new Date(now).toISOString();
  // A loop, not Uint8Array.from(string, …): that one walks the string through an iterator, an object per character.
  lastBytes = new Uint8Array(lastTimestamp.length);
  for (let i = 0; i < lastTimestamp.length; i++) lastBytes[i] = lastTimestamp.charCodeAt(i);
}

/** Now in RFC 3339. */
export function timestampNow(): string {
  const now = Date.now();
  if (now !== lastMs) refresh(now);
  return lastTimestamp;
}

/**
 * The time `ms` (milliseconds since the epoch) in RFC 3339 as ASCII bytes: 24
 * of them until the year 10000, 27 after. Kept for the last millisecond asked
 * (events are written in the order they happened, many in one millisecond).
 */
export function timestampBytesAt(ms: number): Uint8Array {
  if (ms !== lastMs) refresh(ms);
  return lastBytes;
}
