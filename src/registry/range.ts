/**
 * `Range: bytes=…` on blob GET (RFC 9110 §14). One range is served as 206;
 * a range that starts at or past the end, or whose last byte comes before its
 * first (`500-0`), is 416. A server may always ignore `Range` and send the
 * whole representation (§14.2), and that is what a header that is not a
 * single byte range gets: another unit, a malformed value, several ranges.
 *
 * @module
 */

/** What a `Range` header asks of an object of a given size. */
export type RangeRequest =
  | { kind: "full" }
  | { kind: "partial"; start: number; end: number }
  | { kind: "unsatisfiable" };

const FULL: RangeRequest = { kind: "full" };
const UNSATISFIABLE: RangeRequest = { kind: "unsatisfiable" };
const RANGE_SPEC = /^(\d*)-(\d*)$/;

/** Interpret `header` against an object of `size` bytes. */
export function parseRange(header: string | null, size: number): RangeRequest {
  if (header === null) return FULL;
  const equals = header.indexOf("=");
  // Range units are case-insensitive (§14.1); an unknown unit must be ignored (§14.2).
  if (equals < 0 || header.slice(0, equals).trim().toLowerCase() !== "bytes") return FULL;
  // Empty list elements are allowed and ignored (§5.6.1).
  const specs = header.slice(equals + 1).split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (specs.length !== 1) return FULL;
  const match = RANGE_SPEC.exec(specs[0]!);
  if (!match) return FULL;
  const [, first = "", last = ""] = match;
  if (first === "") return last === "" ? FULL : suffixRange(Number(last), size);
  // Digits only, so Number() is exact or huge (even Infinity): both compare correctly below.
  const start = Number(first);
  const end = last === "" ? Infinity : Number(last);
  // §14.1.1 calls last < first invalid; a server may reject it, and OCI conformance expects it rejected.
  if (end < start || start >= size) return UNSATISFIABLE;
  return { kind: "partial", start, end: Math.min(end, size - 1) };
}

/** `bytes=-N`: the last N bytes. */
function suffixRange(length: number, size: number): RangeRequest {
  if (length === 0) return UNSATISFIABLE;
  // A 206 cannot describe zero bytes (`Content-Range` has no empty form), so an empty blob is sent whole.
  if (size === 0) return FULL;
  return { kind: "partial", start: Math.max(0, size - length), end: size - 1 };
}
