/**
 * Parsers for single configuration values. Each throws {@link ConfigError}
 * naming the key, so start-up stops with a message that says what to fix.
 *
 * @module
 */

/** An invalid configuration value; `key` is the dotted path (and where it came from). */
export class ConfigError extends Error {
  /** Always `ConfigError`. */
  override readonly name = "ConfigError";
  constructor(
    /** The dotted key at fault, e.g. `storage.s3.bucket` (with its environment variable when it came from one). */
    readonly key: string,
    /** What is wrong with its value. */
    readonly reason: string,
  ) {
    super(`${key}: ${reason}`);
  }
}

/** A listen address from `http.addr`: `host:port`, `:port` (all interfaces) or `[v6]:port`. */
export interface ListenAddress {
  /** The interface (`0.0.0.0` for all). */
  host: string;
  /** The port (0: any free one). */
  port: number;
}

/** Parse `http.addr`. An empty host means every interface (`0.0.0.0`), as in Distribution. */
export function parseAddr(key: string, value: unknown): ListenAddress {
  const text = str(key, value);
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(text);
  if (!match) throw new ConfigError(key, `expected "host:port", ":port" or "[ipv6]:port", got ${JSON.stringify(text)}`);
  const port = Number(match[3]);
  if (port > 65535) throw new ConfigError(key, `port ${port} is out of range`);
  const host = match[1] ?? match[2] ?? "";
  return { host: host === "" ? "0.0.0.0" : host, port };
}

/** A non-empty string (numbers from environment overrides are accepted as text). */
export function str(key: string, value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value !== "string" || value.trim() === "") throw new ConfigError(key, "expected a non-empty string");
  return value;
}

/** A list of non-empty strings; a single string (or comma-separated text from the environment) is accepted. */
export function stringList(key: string, value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",").map((s) => s.trim()) : [value];
  return list.map((item, i) => str(`${key}[${i}]`, item));
}

/** A boolean; `"true"`/`"false"` (any case) as written in environment variables too. */
export function bool(key: string, value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === "true";
  throw new ConfigError(key, `expected true or false, got ${JSON.stringify(value)}`);
}

/** A positive integer (decimal text accepted). */
export function positiveInt(key: string, value: unknown): number {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n <= 0) {
    throw new ConfigError(key, `expected a positive integer, got ${JSON.stringify(value)}`);
  }
  return n;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "\u00b5s": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration in milliseconds: a Go duration string (`"10s"`, `"1m30s"`,
 * `"250ms"`) as Distribution writes them, or a number of seconds.
 */
export function duration(key: string, value: unknown): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value * 1000;
  if (typeof value === "string") {
    const text = value.trim();
    if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
    const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|\u00b5s|ms|s|m|h)/g)]; // \u00b5 is the micro sign, written so to keep the CLI bundle ASCII
    if (parts.length > 0 && parts.map((p) => p[0]).join("") === text) {
      return parts.reduce((ms, p) => ms + Number(p[1]) * (UNIT_MS[p[2] as string] as number), 0);
    }
  }
  throw new ConfigError(key, `expected a duration such as "30s" or "1m30s", got ${JSON.stringify(value)}`);
}

/** An absolute http(s) URL. */
export function httpUrl(key: string, value: unknown): string {
  const text = str(key, value);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(key, `expected an absolute http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(key, `expected an http or https URL, got ${JSON.stringify(text)}`);
  }
  return text;
}

/** A URL path prefix such as `/service/token` (leading slash, no trailing slash, no query). */
export function pathPrefix(key: string, value: unknown): string {
  const text = str(key, value);
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(text)) {
    throw new ConfigError(key, `expected a path such as "/service/token", got ${JSON.stringify(text)}`);
  }
  return text;
}

/** `http.headers`: a map of header name to a list of values (a single string is taken as one value). */
export function headerMap(key: string, value: unknown): [string, string][] {
  if (value === null || value === undefined) return [];
  if (typeof value !== "object" || Array.isArray(value)) throw new ConfigError(key, "expected a map of header name to list of values");
  const out: [string, string][] = [];
  for (const [name, values] of Object.entries(value as Record<string, unknown>)) {
    const where = `${key}.${name}`;
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new ConfigError(where, "not a valid header name");
    const list = Array.isArray(values) ? values : [values];
    for (const v of list) {
      if (typeof v !== "string" && typeof v !== "number") throw new ConfigError(where, "expected a string or a list of strings");
      const text = String(v);
      if (/[\r\n\0]/.test(text)) throw new ConfigError(where, "header values cannot contain line breaks");
      out.push([name, text]);
    }
  }
  return out;
}

/** The log levels the CLI knows; Distribution's logrus names are mapped onto them. */
export type CliLogLevel = "error" | "warn" | "info" | "debug";

/** Parse `log.level` (`panic`/`fatal` → error, `warning` → warn, `trace` → debug). */
export function logLevel(key: string, value: unknown): CliLogLevel {
  const text = str(key, value).toLowerCase();
  const map: Record<string, CliLogLevel> = {
    panic: "error", fatal: "error", error: "error", warn: "warn", warning: "warn", info: "info", debug: "debug", trace: "debug",
  };
  const level = map[text];
  if (!level) throw new ConfigError(key, `expected one of error, warn, info, debug, got ${JSON.stringify(value)}`);
  return level;
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A byte count: a number, or a string such as `"64GiB"`, `"500MB"`, `"1024"`. */
export function byteSize(key: string, value: unknown): number {
  const match = typeof value === "string" ? /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value) : null;
  const n = typeof value === "number" ? value : match ? Number(match[1]) * (SIZE_UNITS[match[2]!.toLowerCase()] ?? NaN) : NaN;
  if (!Number.isFinite(n) || n <= 0 || n > Number.MAX_SAFE_INTEGER) {
    throw new ConfigError(key, `expected a size such as "64GiB" or "500MB", got ${JSON.stringify(value)}`);
  }
  return Math.floor(n);
}
