/**
 * The `http` section: where to listen (`addr`, `net`), the public base URL
 * (`host`), the path everything is mounted under (`prefix`), the upload secret, extra response headers, the drain timeout at
 * shutdown, whether to trust `X-Forwarded-*` (`registrykit.trustproxy`),
 * `Strict-Transport-Security` (`registrykit.hsts`), and TLS and HTTP/2 (read
 * in `config-tls.ts`).
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import type { AllInOneConfig } from "./config-types.js";
import { resolveHttp2, resolveTlsConfig } from "./config-tls.js";
import { bool, ConfigError, duration, headerMap, httpUrl, parseAddr, str, type ListenAddress } from "./config-values.js";

/** `http.net` (only `tcp`) and `http.addr` (default `0.0.0.0:5000`, as in Distribution). */
export function resolveListen({ opt, named }: ConfigReader): ListenAddress {
  const net = opt("http.net", str);
  if (net !== undefined && net !== "tcp") throw new ConfigError(named("http.net"), `only "tcp" is supported, got ${JSON.stringify(net)}`);
  return opt("http.addr", parseAddr) ?? { host: "0.0.0.0", port: 5000 };
}

/** The rest of the `http` section, around the listen address read by {@link resolveListen}. */
export function resolveHttp(reader: ConfigReader, addr: ListenAddress): AllInOneConfig["http"] {
  const { get, opt, named } = reader;
  const publicUrl = opt("http.host", httpUrl);
  const prefix = opt("http.prefix", mountPrefix);
  const tls = resolveTlsConfig(reader);
  const hsts = resolveHsts(reader, tls !== undefined, headerMap(named("http.headers"), get("http.headers")));
  return {
    host: addr.host,
    port: addr.port,
    ...(publicUrl !== undefined ? { publicUrl: publicUrl.replace(/\/+$/, "") } : {}),
    ...(prefix ? { prefix } : {}),
    ...(get("http.secret") !== undefined ? { secret: opt("http.secret", str) } : {}),
    headers: headerMap(named("http.headers"), get("http.headers")),
    drainTimeout: opt("http.draintimeout", duration) ?? 10_000,
    trustProxy: opt("registrykit.trustproxy", bool) ?? false,
    ...(tls ? { tls } : {}),
    ...(hsts ? { hsts } : {}),
    ...resolveHttp2(reader),
  };
}

/** The `Strict-Transport-Security` value of {@link resolveHsts} when TLS is on and nothing else is said: one year. */
export const DEFAULT_HSTS = "max-age=31536000";
const HSTS_VALUE = /^max-age=\d{1,10}(\s*;\s*(includeSubDomains|preload))*$/i;

/**
 * `registrykit.hsts`: the `Strict-Transport-Security` value sent on https
 * responses. Unset: {@link DEFAULT_HSTS} when TLS is on (browsers then keep
 * to https for the web page), none otherwise; `false` turns it off; a value
 * (e.g. `max-age=63072000; includeSubDomains`) is sent on https responses,
 * with TLS here or at a proxy (`registrykit.trustproxy`). A
 * `Strict-Transport-Security` in `http.headers` wins: it is sent as given.
 */
function resolveHsts({ get, named }: ConfigReader, tls: boolean, headers: [string, string][]): string | undefined {
  if (headers.some(([name]) => name.toLowerCase() === "strict-transport-security")) return undefined;
  const value = get("registrykit.hsts");
  if (value === undefined || value === null || value === true) return tls ? DEFAULT_HSTS : undefined;
  if (value === false) return undefined;
  const text = str(named("registrykit.hsts"), value).trim();
  if (!HSTS_VALUE.test(text)) {
    throw new ConfigError(named("registrykit.hsts"), `expected false or a Strict-Transport-Security value such as "${DEFAULT_HSTS}; includeSubDomains", got ${JSON.stringify(value)}`);
  }
  return text;
}

/**
 * `http.prefix` as `createRegistry`'s `basePath` takes it: `""` for none.
 * Distribution wants `/path/` (both slashes); the trailing one is optional
 * here. A prefix without the leading slash stops start-up: Distribution starts
 * on one and answers 404 to every request.
 */
function mountPrefix(key: string, value: unknown): string {
  if (value === "") return "";
  const trimmed = str(key, value).replace(/\/+$/, "");
  if (trimmed === "") return "";
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed) || trimmed.split("/").some((s) => s === "." || s === "..")) {
    throw new ConfigError(key, `expected a path such as "/registry/" (segments of letters, digits and -._~), got ${JSON.stringify(value)}`);
  }
  return trimmed;
}
