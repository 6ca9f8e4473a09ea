/**
 * The `http.debug` section (the debug listener: `/debug/health` and
 * Prometheus metrics) and the `health` section (`storagedriver`, `file`,
 * `http`, `tcp`), as
 * Distribution reads them: no `http.debug.addr`, no debug listener; metrics
 * are collected only with `http.debug.prometheus.enabled`; health checks run
 * (and gate the API) whether or not a debug listener shows them.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import { bool, ConfigError, duration, headerMap, httpUrl, parseAddr, pathPrefix, str, type ListenAddress } from "./config-values.js";

/** `http.debug`: the second listener. */
export interface DebugConfig {
  /** `http.debug.addr`: where the debug listener binds. */
  addr: ListenAddress;
  /** `http.debug.prometheus`, when enabled: the path of the metrics (default `/metrics`). */
  prometheus?: {
    /** The path the metrics are served at on the debug listener. */
    path: string;
  };
}

/** `health.storagedriver`, when enabled. */
export interface StorageHealthConfig {
  /** `interval`: milliseconds between checks (default 10 s). */
  intervalMs: number;
  /** `threshold`: consecutive failures before the check fails (0, the default: the first). */
  threshold: number;
}

/** One `health.file` entry: fails while `file` exists (no threshold, as in Distribution). */
export interface FileHealthConfig {
  /** The file, absolute. */
  file: string;
  /** Milliseconds between checks (default 10 s). */
  intervalMs: number;
}

/** One `health.http` entry: a HEAD request that must answer `statusCode`. */
export interface HttpHealthConfig {
  /** The URL. */
  uri: string;
  /** Request headers, as name/value pairs. */
  headers: [string, string][];
  /** The expected status (default 200). */
  statusCode: number;
  /** Milliseconds the request may take (default: the interval). */
  timeoutMs: number;
  /** Milliseconds between checks (default 10 s). */
  intervalMs: number;
  /** Consecutive failures before the check fails. */
  threshold: number;
}

/** One `health.tcp` entry: a TCP connection to `addr` must open. */
export interface TcpHealthConfig {
  /** `host:port`, as written (also the check's name). */
  addr: string;
  /** Where to connect. */
  target: ListenAddress;
  /** Milliseconds the connection may take (default: the interval). */
  timeoutMs: number;
  /** Milliseconds between checks (default 10 s). */
  intervalMs: number;
  /** Consecutive failures before the check fails. */
  threshold: number;
}

/** The `health` section. */
export interface HealthConfig {
  /** `health.storagedriver`, when enabled. */
  storageDriver?: StorageHealthConfig;
  /** `health.file` entries. */
  files: FileHealthConfig[];
  /** `health.http` entries. */
  http: HttpHealthConfig[];
  /** `health.tcp` entries. */
  tcp: TcpHealthConfig[];
}

/** Read the `health` section; `undefined` when it configures no check. */
export function resolveHealth(reader: ConfigReader): HealthConfig | undefined {
  const storageDriver = resolveStorageHealth(reader);
  const list = (key: string): Record<string, unknown>[] => {
    const value = reader.get(key);
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new ConfigError(reader.named(key), "expected a list");
    return value.map((item, i) => {
      if (item === null || typeof item !== "object" || Array.isArray(item)) throw new ConfigError(`${reader.named(key)}[${i}]`, "expected a map");
      return item as Record<string, unknown>;
    });
  };
  const num = (key: string, value: unknown, fallback: number, parse: (k: string, v: unknown) => number) => (value === undefined || value === null ? fallback : parse(key, value));
  const interval = (key: string, value: unknown) => {
    const ms = num(`${key}.interval`, value, 10_000, duration);
    if (ms <= 0) throw new ConfigError(`${key}.interval`, "must be longer than zero");
    return ms;
  };
  const files = list("health.file").map((item, i): FileHealthConfig => {
    const key = `health.file[${i}]`;
    return { file: reader.abs(str(`${key}.file`, item.file)), intervalMs: interval(key, item.interval) };
  });
  const http = list("health.http").map((item, i): HttpHealthConfig => {
    const key = `health.http[${i}]`;
    const intervalMs = interval(key, item.interval);
    const statusCode = num(`${key}.statuscode`, item.statuscode, 200, wholeNumber);
    if (statusCode < 100 || statusCode > 599) throw new ConfigError(`${key}.statuscode`, `expected an HTTP status, got ${statusCode}`);
    return {
      uri: httpUrl(`${key}.uri`, item.uri),
      headers: headerMap(`${key}.headers`, item.headers),
      statusCode,
      timeoutMs: num(`${key}.timeout`, item.timeout, 0, duration) || intervalMs,
      intervalMs,
      threshold: num(`${key}.threshold`, item.threshold, 0, wholeNumber),
    };
  });
  const tcp = list("health.tcp").map((item, i): TcpHealthConfig => {
    const key = `health.tcp[${i}]`;
    const intervalMs = interval(key, item.interval);
    const addr = str(`${key}.addr`, item.addr);
    return {
      addr,
      target: parseAddr(`${key}.addr`, addr),
      timeoutMs: num(`${key}.timeout`, item.timeout, 0, duration) || intervalMs,
      intervalMs,
      threshold: num(`${key}.threshold`, item.threshold, 0, wholeNumber),
    };
  });
  if (!storageDriver && files.length + http.length + tcp.length === 0) return undefined;
  return { ...(storageDriver ? { storageDriver } : {}), files, http, tcp };
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
