/**
 * The `http.debug` section (the debug listener: `/debug/health` and
 * Prometheus metrics) and the `health` section (`health.storagedriver`), as
 * Distribution reads them: no `http.debug.addr`, no debug listener; metrics
 * are collected only with `http.debug.prometheus.enabled`; health checks run
 * (and gate the API) whether or not a debug listener shows them.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import { bool, ConfigError, duration, parseAddr, pathPrefix, type ListenAddress } from "./config-values.js";

/** `http.debug`: the second listener. */
export interface DebugConfig {
  /** `http.debug.addr`: where the debug listener binds. */
  addr: ListenAddress;
  /** `http.debug.prometheus`, when enabled: the path of the metrics (default `/metrics`). */
  prometheus?: { path: string };
}

/** `health.storagedriver`, when enabled. */
export interface StorageHealthConfig {
  /** `interval`: milliseconds between checks (default 10 s). */
  intervalMs: number;
  /** `threshold`: consecutive failures before the check fails (0, the default: the first). */
  threshold: number;
}

/** Read `http.debug`; `undefined` without `http.debug.addr`. */
export function resolveDebug({ opt, named }: ConfigReader): DebugConfig | undefined {
  const addr = opt("http.debug.addr", parseAddr);
  const prometheus = opt("http.debug.prometheus.enabled", bool) ?? false;
  const path = opt("http.debug.prometheus.path", pathPrefix) ?? "/metrics";
  if (addr === undefined) return undefined;
  if (path === "/debug/health") throw new ConfigError(named("http.debug.prometheus.path"), "must differ from /debug/health");
  return { addr, ...(prometheus ? { prometheus: { path } } : {}) };
}

/** Read `health.storagedriver`; `undefined` unless enabled. */
export function resolveStorageHealth({ opt, named }: ConfigReader): StorageHealthConfig | undefined {
  if (!(opt("health.storagedriver.enabled", bool) ?? false)) return undefined;
  const intervalMs = opt("health.storagedriver.interval", duration) ?? 10_000;
  if (intervalMs <= 0) throw new ConfigError(named("health.storagedriver.interval"), "must be longer than zero");
  const threshold = opt("health.storagedriver.threshold", wholeNumber) ?? 0;
  return { intervalMs, threshold };
}

/** A whole number, 0 or more. */
function wholeNumber(key: string, value: unknown): number {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw new ConfigError(key, `expected a whole number (0 or more), got ${JSON.stringify(value)}`);
  return n;
}
