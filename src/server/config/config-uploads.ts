/**
 * Upload limits and the purge of abandoned uploads, read from
 * `storage.maintenance.uploadpurging` (Distribution's keys: `enabled`, `age`,
 * `interval`, `dryrun`) and `registrykit.uploads` (`peruser`,
 * `perrepository`, `bytesperuser`, `bytesperrepository`). The defaults are
 * Distribution's (on, `age: 168h`, `interval: 24h`, `dryrun: false`), so a
 * Distribution config behaves as it did; the library's own default idle time
 * (`limits.uploadIdleSeconds`, one hour) applies only to `createRegistry` used
 * directly.
 *
 * @module
 */
import { bool, byteSize, ConfigError, duration, positiveInt } from "./config-values.js";

/** What the all-in-one server does about open uploads. */
export interface UploadsConfig {
  /**
   * `uploadpurging.age` in seconds: an upload without a byte written for this
   * long is abandoned and purged (the registry's `limits.uploadIdleSeconds`).
   * The all-in-one server also lets an upload run this long from its start
   * when that is longer than the library's 24 hours (`uploadMaxAgeSeconds`),
   * since Distribution keeps an upload until its age passes.
   */
  idleSeconds: number;
  /** The periodic purge; `undefined` = off. */
  purge?: {
    /** Milliseconds between purges (`interval`). */
    intervalMs: number;
    /** Only log what would be removed (`dryrun`). */
    dryRun: boolean;
  };
  /** Limits passed to `createRegistry({ limits })`; absent ones take the library's defaults. */
  limits: {
    /** Open uploads per caller (`peruser`). */
    uploadsPerCaller?: number;
    /** Open uploads per repository (`perrepository`). */
    uploadsPerRepository?: number;
    /** Bytes in open uploads per caller (`bytesperuser`). */
    uploadBytesPerCaller?: number;
    /** Bytes in open uploads per repository (`bytesperrepository`). */
    uploadBytesPerRepository?: number;
  };
}

/** Distribution's `uploadpurging.age` default: uploads untouched for a week are purged. */
export const DEFAULT_PURGE_AGE_MS = 168 * 3600 * 1000;
/** Distribution's `uploadpurging.interval` default: one purge a day. */
export const DEFAULT_PURGE_INTERVAL_MS = 24 * 3600 * 1000;

/** Read the upload settings. */
export function resolveUploads(
  opt: <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined,
  named: (key: string) => string,
): UploadsConfig {
  const p = (key: string) => `storage.maintenance.uploadpurging.${key}`;
  const ageMs = opt(p("age"), duration) ?? DEFAULT_PURGE_AGE_MS;
  if (ageMs < 1000) throw new ConfigError(named(p("age")), "must be at least 1s");
  const intervalMs = opt(p("interval"), duration) ?? DEFAULT_PURGE_INTERVAL_MS;
  if (intervalMs < 1000) throw new ConfigError(named(p("interval")), "must be at least 1s");
  const enabled = opt(p("enabled"), bool) ?? true;
  const u = (key: string) => `registrykit.uploads.${key}`;
  const limits: UploadsConfig["limits"] = {};
  const perUser = opt(u("peruser"), positiveInt);
  if (perUser !== undefined) limits.uploadsPerCaller = perUser;
  const perRepository = opt(u("perrepository"), positiveInt);
  if (perRepository !== undefined) limits.uploadsPerRepository = perRepository;
  const bytesPerUser = opt(u("bytesperuser"), byteSize);
  if (bytesPerUser !== undefined) limits.uploadBytesPerCaller = bytesPerUser;
  const bytesPerRepository = opt(u("bytesperrepository"), byteSize);
  if (bytesPerRepository !== undefined) limits.uploadBytesPerRepository = bytesPerRepository;
  return {
    idleSeconds: Math.round(ageMs / 1000),
    ...(enabled ? { purge: { intervalMs, dryRun: opt(p("dryrun"), bool) ?? false } } : {}),
    limits,
  };
}
