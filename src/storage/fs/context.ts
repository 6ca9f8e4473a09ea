/**
 * The state one fs driver shares between its modules: what the closure of
 * `fsStorage` used to hold. Made once by `fsStorage` and passed down.
 *
 * @module
 */
import type { ObjectInfo } from "../driver.js";
import type { FsPaths } from "./paths.js";
import type { DirectoryListings } from "./dir-listings.js";
import type { AppendWriteback } from "./writeback.js";

/** One driver's directories, options and in-memory bookkeeping. */
export interface FsContext extends FsPaths {
  /** The `fsync` option: flush data and directory entries before a write or move resolves. */
  readonly sync: boolean;
  /** The `staleLockMs` option (writer-lock.ts). */
  readonly staleLockMs: number;
  /** Settles once the root and its temp directory exist; every method that writes waits for it. */
  readonly ready: Promise<void>;
  /**
   * Resolves once the root and its temp directory exist, or once making them
   * was refused for want of permission (`EACCES`, `EPERM`, `EROFS`): reads
   * (`stat`, `read`, `list`) wait for it, so a root this process may not
   * write is still read. Any other failure rejects it, as `ready`.
   */
  readonly settled: Promise<void>;
  /** Early writeback of appended bytes (writeback.ts). */
  readonly writeback: AppendWriteback;
  /** The lstat shared by the stats of one file asked for in the same turn (read.ts). */
  readonly statsInFlight: Map<string, Promise<ObjectInfo | undefined>>;
  /** The `statOnEventLoop` option: that lstat is synchronous (else through the thread pool). */
  readonly statOnEventLoop: boolean;
  /** The sorted entries of large directories, for `list` (dir-listings.ts). */
  readonly listings: DirectoryListings;
}
