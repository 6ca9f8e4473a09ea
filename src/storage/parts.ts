/**
 * Appended objects kept as part objects (the S3 and R2 drivers): which parts
 * make up the object.
 *
 * @module
 */

/**
 * The run of parts that starts at offset 0 and has no gap, in order, and its
 * length: the appended object. A part beyond a gap (a leftover of an append
 * that failed) is not part of it.
 */
export function contiguousParts<T extends { offset: number; size: number }>(allParts: readonly T[]): { parts: T[]; partsSize: number } {
  const sorted = [...allParts].sort((a, b) => a.offset - b.offset);
  const parts: T[] = [];
  let end = 0;
  for (const part of sorted) {
    if (part.offset !== end) break;
    parts.push(part);
    end += part.size;
  }
  return { parts, partsSize: end };
}
