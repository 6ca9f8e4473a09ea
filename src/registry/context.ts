/**
 * What every registry handler receives: the stores (with every configured
 * feature around them) and the settings of the HTTP side.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import type { RegistryStores, StoreCall } from "./stores/types.js";
import type { UploadStateCodec } from "./upload-state.js";
import type { ResolvedValidation } from "./manifest-validation.js";

/** The settings of the handlers (from `RegistryOptions`, resolved). */
export interface HandlerSettings {
  deleteEnabled: boolean;
  /** Read-only maintenance mode: every write gets 405. */
  readOnly: boolean;
  manifestBytes: number;
  listEntries: number;
  manifestMediaTypes: ReadonlySet<string>;
  /** Blob GETs answer 307 to the storage's URL with this lifetime; `undefined` = never. */
  redirect: { expiresInSeconds: number } | undefined;
  /** What a pushed manifest's references must satisfy (manifest-validation.ts). */
  validation: ResolvedValidation;
}

/** What every handler receives. */
export interface RegistryContext {
  /** The stores, every feature wrapped around them (docs/stores.md). */
  stores: RegistryStores;
  /** The API's root path without a trailing slash: `/v2`, or `<basePath>/v2`; `Location` and `Link` start with it. */
  v2: string;
  states: UploadStateCodec;
  settings: HandlerSettings;
  /** Who makes a request (the store call's `caller`); undefined when anonymous. */
  callerOf: (request: Request) => string | undefined;
  log: LogHook;
}

/** The store call of `request`. */
export function callOf(ctx: RegistryContext, request: Request): StoreCall {
  const caller = ctx.callerOf(request);
  return caller === undefined ? { request } : { request, caller };
}
