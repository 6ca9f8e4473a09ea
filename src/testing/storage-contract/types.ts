/**
 * The public types of the storage contract suite (re-exported by
 * `registry-kit/testing`).
 *
 * @module
 */
import type { StorageDriver } from "../../storage/driver.js";

/** What a contract `setup` returns: a fresh, empty driver and how to dispose of it. */
export interface StorageContractSubject {
  /** The driver under test, fresh and empty. */
  driver: StorageDriver;
  /** Called after each test (after `driver.close`), e.g. to remove a temp directory or bucket. */
  cleanup?: () => Promise<void>;
}

/** Figures measured by the large-stream tests, for drivers that want to print them. */
export interface LargeStreamStats {
  /** `"write"` or `"read"`. */
  phase: "write" | "read";
  /** Bytes streamed. */
  bytes: number;
  /** How long it took. */
  milliseconds: number;
  /** Bytes per second over the phase. */
  bytesPerSecond: number;
  /** Peak RSS during the phase minus RSS just before it, in bytes. */
  rssGrowth: number;
}

/** Options for {@link describeStorageContract}. */
export interface StorageContractOptions {
  /** Size of the large-stream round trip. Default 256 MiB. */
  largeBytes?: number;
  /**
   * Assert that RSS grows by less than {@link StorageContractOptions.rssLimit}
   * while the large stream is written and read back. Default `true`; turn it off
   * for drivers that keep objects in RAM by design (the memory driver).
   */
  checkMemory?: boolean;
  /** The RSS growth allowed per phase of the large-stream test. Default 64 MiB. */
  rssLimit?: number;
  /** Timeout of the large-stream test, in ms. Default 300 000. */
  largeTimeout?: number;
  /**
   * The driver offers {@link StorageDriver.redirectURL}: the suite checks that
   * its URLs serve exactly the bytes and expire. Default `false`, and then the
   * suite checks that the driver does not offer it.
   */
  redirect?: boolean;
  /** Called with the figures of the large-stream test (write, then read). */
  onLargeStreamStats?: (stats: LargeStreamStats) => void;
}
