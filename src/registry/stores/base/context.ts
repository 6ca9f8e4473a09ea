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

/** Settings of {@link baseStores}. */
export interface BaseStoreOptions {
  /** Where the stores keep each object. Default `registryKitLayout`. */
  layout?: KeyLayout;
  /** Limits on open upload sessions (resolved). */
  uploadLimits: UploadLimits;
  /** Uploads started longer ago than this are unknown and removed on touch. */
  uploadMaxAgeMs: number;
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

/** A version string of a stored object: its size and modification time, from one stat. */
export function versionOf(info: { size: number; modified: Date }): string {
  return `${info.size}:${info.modified.getTime()}`;
}
