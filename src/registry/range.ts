/**
 * `Range: bytes=…` on blob GET (RFC 9110 §14). One range only; a header that is
 * not a single well-formed byte range is ignored and the whole blob is served.
 *
 * @module
 */

/** What a `Range` header asks of an object of a given size. */
export type RangeRequest =
  | { kind: "full" }
  | { kind: "partial"; start: number; end: number }
  | { kind: "unsatisfiable" };

const SINGLE = /^bytes=(\d*)-(\d*)$/;

/** Interpret `header` against an object of `size` bytes. */
export function parseRange(header: string | null, size: number): RangeRequest {
  if (header === null) return { kind: "full" };
  const match = SINGLE.exec(header.trim());
  if (!match) return { kind: "full" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "full" };
  if (first === "") {
    // suffix range: the last N bytes
    const length = Number(last);
    if (!Number.isSafeInteger(length)) return { kind: "full" };
    if (length === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "partial", start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Number(last);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return { kind: "full" };
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "partial", start, end: Math.min(end, size - 1) };
}
