/**
 * How driver keys map onto bucket keys: the `rootDirectory` prefix, the part
 * objects `<key>!<offset>` of an appended object, and back from a listed
 * bucket key to the driver key it shows.
 *
 * `!` sorts below every character a driver key may hold, so a key's part
 * objects (and its writer lock `<key>!writer`) list right after the key and
 * never match another key's prefix.
 *
 * @module
 */

/** Separates a key from the suffix of its part objects and writer lock. */
export const PART_MARK = "!";
/** Part offsets are zero-padded to this many digits, so they sort by number. */
export const OFFSET_DIGITS = 16;
const FIRST_PART = "0".repeat(OFFSET_DIGITS);

/** The bucket keys of one driver, under its `rootDirectory`. */
export class KeyLayout {
  /** `"<rootDirectory>/"`, or `""` without one. */
  readonly rootPrefix: string;

  constructor(rootDirectory: string) {
    this.rootPrefix = rootDirectory ? rootDirectory + "/" : "";
  }

  /** The bucket key of a plain object. */
  objectKey(key: string): string {
    return this.rootPrefix + key;
  }

  /** The bucket key of the part object at `offset` of an appended object. */
  partKey(key: string, offset: number): string {
    return this.objectKey(key) + PART_MARK + String(offset).padStart(OFFSET_DIGITS, "0");
  }

  /**
   * The driver key that a listed bucket key shows to exist: a plain object, or
   * the first part object of an appended one, as `stat` sees it.
   * Further part objects and writer locks show nothing.
   */
  logicalKey(raw: string): string | undefined {
    const k = raw.slice(this.rootPrefix.length);
    const mark = k.indexOf(PART_MARK);
    if (mark === -1) return k;
    return k.slice(mark + 1) === FIRST_PART ? k.slice(0, mark) : undefined;
  }
}

/** The offset a part object's suffix (after `!`) stands for, or `undefined` for other objects (the writer lock). */
export function partOffset(suffix: string): number | undefined {
  return suffix.length === OFFSET_DIGITS && /^\d+$/.test(suffix) ? Number(suffix) : undefined;
}
