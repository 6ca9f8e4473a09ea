/**
 * What the base stores share: the checked driver, the key layout and the
 * settings of uploads. Only the storage level (this folder) sees it.
 *
 * @module
 */
import type { StorageDriver } from "../../../storage/driver.js";
import type { StreamHasher } from "../../../oci/hash.js";
import type { KeyLayout } from "./layout.js";
import type { UploadLimits } from "./upload-limits.js";
import type { RegistryLimits } from "../../options.js";

/** Options of `baseStores`. */
export interface BaseStoreOptions {
  /** The upload limits and age (as `createRegistry`'s `limits`; the rest of them is the handlers'). Default: their defaults. */
  limits?: RegistryLimits;
}

/** The shared state of one set of base stores. */
export interface BaseContext {
  /** The registry's driver, already `checked()`. */
  readonly storage: StorageDriver;
  readonly layout: KeyLayout;
  readonly uploadLimits: UploadLimits;
  readonly uploadMaxAgeMs: number;
  /**
   * Hashers of uploads in progress in this process, by `name/uuid`, with the
   * upload size they have seen. Only a speed-up: when the next request of an
   * upload lands here at that size, its hash continues instead of re-reading
   * the upload at commit. Any other process simply re-reads (rule 5 holds).
   */
  readonly liveHashers: Map<string, { hasher: StreamHasher; offset: number }>;
}

/**
 * The version string of a stored object: its size and modification time,
 * from one stat. Each call site keeps its last answer: a manifest pulled again
 * and again gives the same pair, and the string is not made again (number to
 * string conversion was a measurable part of a GET).
 */
export function versionMemo(): (info: { size: number; modified: Date }) => string {
  let size = -1;
  let ms = -1;
  let last = "";
  return (info) => {
    const time = info.modified.getTime();
    if (info.size !== size || time !== ms) {
      size = info.size;
      ms = time;
      last = `${size}:${ms}`;
    }
    return last;
  };
}
