/**
 * The pull-through cache of `registry-kit serve`: Distribution's `proxy`
 * section (`remoteurl`, `username`, `password`, `ttl`: every repository is
 * proxied, as Distribution does) or registry-kit's `registrykit.proxy.upstreams`
 * (a list of `{ prefix, remoteurl, username, password, ttl, allowpush, realms }`, several
 * upstreams beside local repositories). Not both. `ttl` is how long a cached
 * tag is served before one `HEAD` confirms it; `realms` the token realms
 * beside the upstream's own origin that may receive its credentials (docs/proxy.md).
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import { bool, ConfigError, duration, httpUrl, str, stringList } from "./config-values.js";

/** One upstream of the all-in-one server. */
export interface ProxyUpstreamConfig {
  /** Local name prefix (`""` for everything, else ending in `/`). */
  prefix: string;
  /** The upstream's base URL. */
  url: string;
  /** Credentials for the upstream (Basic, or at its token endpoint). */
  credentials?: {
    /** The user name sent to the upstream. */
    username: string;
    /** Its password; never logged. */
    password: string;
  };
  /** Seconds a tag is served before it is confirmed upstream. */
  ttlSeconds: number;
  /** Pushes allowed under the prefix. */
  allowPush: boolean;
  /** Token realms besides the upstream's origin that may receive the credentials (`realms`). */
  realms?: string[];
}

const DEFAULT_TTL_SECONDS = 300;

/** Read `proxy` or `registrykit.proxy.upstreams`; `undefined` when neither is set. */
export function resolveProxy({ get, opt, named }: ConfigReader): ProxyUpstreamConfig[] | undefined {
  const single = get("proxy.remoteurl") !== undefined;
  const list = get("registrykit.proxy.upstreams");
  if (single && list !== undefined) {
    throw new ConfigError(named("registrykit.proxy.upstreams"), "cannot be used together with proxy.remoteurl; list that upstream here with prefix \"\"");
  }
  if (single) {
    return [upstream("proxy", "", (key, parse) => opt(`proxy.${key}`, parse), named)];
  }
  if (list === undefined) {
    if (get("proxy") !== undefined && get("proxy.username") !== undefined) throw new ConfigError(named("proxy.remoteurl"), "is required when proxy is configured");
    return undefined;
  }
  if (!Array.isArray(list) || list.length === 0) throw new ConfigError(named("registrykit.proxy.upstreams"), "expected a list of upstreams");
  return list.map((item, i) => {
    const base = `registrykit.proxy.upstreams.${i}`;
    if (item === null || typeof item !== "object" || Array.isArray(item)) throw new ConfigError(base, "expected a map");
    const entry = item as Record<string, unknown>;
    for (const key of Object.keys(entry)) {
      if (!["prefix", "remoteurl", "username", "password", "ttl", "allowpush", "realms"].includes(key)) throw new ConfigError(`${base}.${key}`, "unknown key");
    }
    const read = <T>(key: string, parse: (key: string, value: unknown) => T): T | undefined => (entry[key] === undefined ? undefined : parse(`${base}.${key}`, entry[key]));
    const prefix = typeof entry.prefix === "string" ? entry.prefix : undefined;
    if (prefix === undefined) throw new ConfigError(`${base}.prefix`, 'expected a string ("" or path components ending in "/")');
    return upstream(base, prefix, read, (key) => key);
  });
}

function upstream(
  base: string,
  prefix: string,
  read: <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined,
  named: (key: string) => string,
): ProxyUpstreamConfig {
  const url = read("remoteurl", httpUrl);
  if (url === undefined) throw new ConfigError(named(`${base}.remoteurl`), "is required");
  const username = read("username", str);
  const password = read("password", str);
  if ((username === undefined) !== (password === undefined)) throw new ConfigError(named(`${base}.${username === undefined ? "username" : "password"}`), "username and password go together");
  const ttlMs = read("ttl", duration);
  const realms = read("realms", (key, value) => stringList(key, value).map((realm, i) => httpUrl(`${key}[${i}]`, realm)));
  return {
    prefix,
    url,
    ...(username !== undefined && password !== undefined ? { credentials: { username, password } } : {}),
    ttlSeconds: ttlMs === undefined ? DEFAULT_TTL_SECONDS : ttlMs / 1000,
    allowPush: read("allowpush", bool) ?? false,
    ...(realms !== undefined ? { realms } : {}),
  };
}
