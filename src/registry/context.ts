/**
 * What every registry handler receives: the checked storage driver and the
 * resolved options.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import type { StorageDriver } from "../storage/driver.js";
import type { UploadStateCodec } from "./upload-state.js";

/** Resolved registry settings shared by the handlers. */
export interface RegistryContext {
  storage: StorageDriver;
  states: UploadStateCodec;
  deleteEnabled: boolean;
  manifestBytes: number;
  listEntries: number;
  uploadMaxAgeMs: number;
  manifestMediaTypes: ReadonlySet<string>;
  log: LogHook;
}
