/**
 * The events' timestamps (src/events/clock.ts): formatted once, then patched
 * in their milliseconds' digits within a second. Every answer must still be
 * exactly `Date#toISOString` of its time, in any order of times.
 */
import { describe, expect, it } from "vitest";
import { timestampBytesAt, timestampLength, timestampNow } from "../../src/events/clock.js";

const text = (bytes: Uint8Array): string => String.fromCharCode(...bytes);

describe("event timestamps", () => {
  it("timestampBytesAt gives toISOString's bytes for times in order, across seconds, backwards, far apart and outside the years 0-9999", () => {
    const start = Date.UTC(2026, 10, 25, 1, 59, 59, 990);
    const times: number[] = [];
    // Milliseconds in order through a second's end, a repeat, a step back into the second before, a jump.
    for (let ms = start; ms < start + 25; ms++) times.push(ms, ms);
    times.push(start + 3, start + 1000, start + 999, start + 86_400_000 * 365, start + 7, start + 11);
    // Before 1970, the year 0's first millisecond and the one before it, the year 9999's last and the one after.
    const year0 = new Date(0).setUTCFullYear(0, 0, 1);
    const year9999End = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    times.push(-1500, -1000, -999, -1, 0, 1, year0 - 1, year0, year0 + 1, year9999End - 1, year9999End, year9999End + 1, year9999End + 2, start);
    // Random times, some within one second of the last.
    let seed = 7;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 2000; i++) times.push(random() < 0.5 ? times[times.length - 1]! + Math.floor(random() * 1500) - 500 : Math.floor(random() * 4e12));
    for (const ms of times) {
      const expected = new Date(ms).toISOString();
      expect(text(timestampBytesAt(ms)), `at ${ms}`).toBe(expected);
      expect(timestampLength(ms), `length at ${ms}`).toBe(expected.length);
    }
  });

  it("timestampNow is now's toISOString, also right after timestampBytesAt patched the bytes of the same millisecond", () => {
    for (let i = 0; i < 200; i++) {
      const now = Date.now();
      // The bytes of the second before, then of now (patched in place when in the same second), then the string.
      timestampBytesAt(now - 1);
      timestampBytesAt(now);
      const before = Date.now();
      const stamp = timestampNow();
      const after = Date.now();
      const at = Date.parse(stamp);
      expect(stamp).toBe(new Date(at).toISOString());
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
    }
  });
});
