/**
 * How driver keys map onto blob names (the `rootDirectory` prefix), the block
 * ids of staged blocks, and the list markers the driver remembers.
 *
 * A key is the blob `<root>/<key>`, nothing else: Azure blobs can be leased
 * (the writer lock) and grown by committing a longer block list (an append),
 * so no side objects are needed, and a listing shows exactly the keys.
 *
 * @module
 */
import { b64, toHex, utf8 } from "../../util/bytes.js";

/** How many list markers a driver remembers (see {@link BlobNames.rememberMarker}). */
const MARKERS = 256;

/** The blob names of one driver, under its `rootDirectory`. */
export class BlobNames {
  /** `"<rootDirectory>/"`, or `""` without one. */
  readonly rootPrefix: string;
  readonly #markers = new Map<string, string>();

  constructor(rootDirectory: string) {
    this.rootPrefix = rootDirectory ? rootDirectory + "/" : "";
  }

  /** The blob name of a key. */
  blob(key: string): string {
    return this.rootPrefix + key;
  }

  /** The key a listed blob name stands for. */
  key(blob: string): string {
    return blob.slice(this.rootPrefix.length);
  }

  /**
   * Remember that Azure's `marker` continues a listing of `prefix` right after
   * blob `last`. List Blobs cannot start after an arbitrary name, so a page
   * that continues one this process served costs one request; any other start
   * is found by reading from the beginning of the prefix (see `list.ts`).
   */
  rememberMarker(prefix: string, last: string, marker: string): void {
    const id = `${prefix}\n${last}`;
    this.#markers.delete(id);
    this.#markers.set(id, marker);
    if (this.#markers.size > MARKERS) this.#markers.delete(this.#markers.keys().next().value!);
  }

  /** The marker that continues a listing of `prefix` after blob `after`, if this process served that page. */
  marker(prefix: string, after: string): string | undefined {
    return this.#markers.get(`${prefix}\n${after}`);
  }
}

/**
 * Block ids for one operation: Azure wants every id of a blob to have the same
 * length, so an id is 16 random hex digits (one run of staging, so that two
 * writers never stage under each other's ids) and a 16-digit sequence number.
 */
export function blockIds(): (index: number) => string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  const run = toHex(bytes);
  return (index) => b64(utf8(run + String(index).padStart(16, "0")));
}
