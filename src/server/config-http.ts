/**
 * The `http` section: where to listen (`addr`, `net`), the public base URL
 * (`host`), the path everything is mounted under (`prefix`), the upload secret, extra response headers, the drain timeout at
 * shutdown, whether to trust `X-Forwarded-*` (`registrykit.trustproxy`), and
 * TLS and HTTP/2 (read in `config-tls.ts`).
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
    ...resolveHttp2(reader),
  };
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
