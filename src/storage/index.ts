/**
 * Storage: the driver contract and the key rules every driver shares.
 * Drivers live in their own subpaths: `registry-kit/storage/memory`,
 * `registry-kit/storage/fs` (Node), `registry-kit/storage/s3`.
 *
 * @module
 */
export { DEFAULT_REDIRECT_SECONDS, StorageError, assertValidKey, checked } from "./driver.js";
export type {
  AppendOptions,
  ByteRange,
  ListOptions,
  ListPage,
  MoveOptions,
  ObjectInfo,
  RedirectOptions,
  StorageBody,
  StorageDriver,
  StorageErrorCode,
  WriteOptions,
} from "./driver.js";
export { instrumentStorage } from "./instrumented.js";
export { bodyChunks, discard, readAll, streamOf, throwIfAborted } from "./streams.js";
