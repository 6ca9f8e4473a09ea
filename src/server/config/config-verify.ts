/**
 * `registrykit.verify`: the all-in-one server's periodic integrity check
 * (docs/verify.md). Off without the section; with it, every blob is re-hashed
 * once per `interval` (default 24h).
 *
 * @module
 */
import { bool, ConfigError, duration, positiveInt } from "./config-values.js";

/** The periodic verify the server runs. */
export interface VerifyScheduleConfig {
  /** Milliseconds from the start (or the end of the previous run) to the next run. */
  intervalMs: number;
  /** Move mismatching blobs under `quarantine/` (else only log them). */
  quarantine: boolean;
  /** Blobs hashed at once. */
  concurrency: number;
}

const DEFAULT_INTERVAL_MS = 24 * 3600 * 1000;
const MAX_CONCURRENCY = 256;

/** Read `registrykit.verify`; `undefined` when the section is absent or `enabled: false`. */
export function resolveVerifySchedule(
  get: (key: string) => unknown,
  opt: <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined,
  named: (key: string) => string,
): VerifyScheduleConfig | undefined {
  const k = (key: string) => `registrykit.verify.${key}`;
  if (get("registrykit.verify") === undefined || opt(k("enabled"), bool) === false) return undefined;
  const intervalMs = opt(k("interval"), duration) ?? DEFAULT_INTERVAL_MS;
  if (intervalMs <= 0) throw new ConfigError(named(k("interval")), "must be longer than 0");
  const concurrency = opt(k("concurrency"), positiveInt) ?? 2;
  if (concurrency > MAX_CONCURRENCY) throw new ConfigError(named(k("concurrency")), `must be at most ${MAX_CONCURRENCY}`);
  return { intervalMs, quarantine: opt(k("quarantine"), bool) ?? false, concurrency };
}
