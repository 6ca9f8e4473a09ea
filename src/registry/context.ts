/**
 * What every registry handler receives: the checked storage driver and the
 * resolved options.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import type { CounterSeries } from "../util/metrics.js";
import type { Emit } from "../events/hook.js";
import type { StorageDriver } from "../storage/driver.js";
import type { StreamHasher } from "../oci/hash.js";
import type { ManifestCache } from "./manifest-cache.js";
import type { PullThrough } from "./pull-through/options.js";
import type { UploadLimits } from "./upload-limits.js";
import type { UploadStateCodec } from "./upload-state.js";
import type { WritePolicy } from "./policy/write-policy.js";
import type { ResolvedValidation } from "./manifest-validation.js";

/** Resolved registry settings shared by the handlers. */
export interface RegistryContext {
  storage: StorageDriver;
  /** The API's root path without a trailing slash: `/v2`, or `<basePath>/v2`; `Location`, `Link` and event URLs start with it. */
  v2: string;
  states: UploadStateCodec;
  deleteEnabled: boolean;
  /** Read-only maintenance mode: every write gets 405. */
  readOnly: boolean;
  manifestBytes: number;
  listEntries: number;
  uploadMaxAgeMs: number;
  /** Limits on open upload sessions (upload-limits.ts). */
  uploadLimits: UploadLimits;
  /** Who makes a request, for the per-caller upload limits; undefined when anonymous. */
  callerOf: (request: Request) => string | undefined;
  manifestMediaTypes: ReadonlySet<string>;
  log: LogHook;
  /** Emits an event to the `onEvent` hook (a no-op without one). */
  emit: Emit;
  /**
   * Hashers of uploads in progress in this process, by `name/uuid`, with the
   * upload size they have seen. Only a speed-up: when the next request of an
   * upload lands here at that size, its hash continues instead of re-reading
   * the upload at commit. Any other process simply re-reads (rule 5 holds).
   */
  liveHashers: Map<string, { hasher: StreamHasher; offset: number }>;
  /** Blob GETs answer 307 to the driver's `redirectURL` with this lifetime; `undefined` = never. */
  redirect: { expiresInSeconds: number } | undefined;
  /** Short-lived cache of tag → digest and manifest metadata/bytes (see manifest-cache.ts). */
  manifests: ManifestCache;
  /** `registrykit_blob_upload_bytes_total`, when the registry has metrics: bytes of upload bodies stored. */
  uploadBytes: CounterSeries | undefined;
  /** The write policies as one, asked before each commit (policy/); absent when none is configured. */
  policy?: WritePolicy;
  /** What a pushed manifest's references must satisfy (manifest-validation.ts). */
  validation: ResolvedValidation;
  /** The pull-through cache's upstreams, when configured (pull-through/). */
  pullThrough?: PullThrough;
}
