/**
 * The all-in-one server's configuration: a CNCF Distribution `config.yml`
 * (YAML or JSON) plus registry-kit's own `registrykit` section, with
 * Distribution's `REGISTRY_*` environment overrides. Pure: it reads no files
 * and touches no process state, so every rule is unit-tested.
 * The reference for users is docs/configuration.md.
 *
 * @module
 */
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { applyEnvOverrides, isMap, STORAGE_OPTIONS, type EnvSources } from "./config-env.js";
import { checkKeys } from "./config-schema.js";
import {
  bool, ConfigError, duration, stringList, headerMap, httpUrl, logLevel, parseAddr, pathPrefix, positiveInt, str,
} from "./config-values.js";
import { resolveVerifySchedule } from "./config-verify.js";
import { resolveUploads } from "./config-uploads.js";
import type { AllInOneConfig, ResolveInput, Resolved, S3StorageConfig, TokenAuthConfig, TokenServiceConfig } from "./config-types.js";

export { ConfigError } from "./config-values.js";
export type { CliLogLevel } from "./config-values.js";
export type { VerifyScheduleConfig } from "./config-verify.js";
export type { UploadsConfig } from "./config-uploads.js";

export type {
  AllInOneConfig, ResolveInput, Resolved, S3StorageConfig, TokenAuthConfig, TokenServiceConfig, UsersConfig,
} from "./config-types.js";

/** The default token service name (`auth.token.service` and `issuer`). */
export const DEFAULT_SERVICE = "registry-kit";
export const DEFAULT_TOKEN_PATH = "/service/token";
export const DEFAULT_USERS_PREFIX = "/api";

/** Parse a config file's text (YAML 1.2, which includes JSON). Throws {@link ConfigError} on bad syntax. */
export function parseConfigText(text: string, source = "config"): unknown {
  try {
    const doc: unknown = parseYaml(text);
    if (doc === null || doc === undefined) return {};
    if (!isMap(doc)) throw new ConfigError(source, "the top level must be a map of sections");
    return doc;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(source, `not valid YAML or JSON: ${(error as Error).message.split("\n")[0]}`);
  }
}

/**
 * The document used when `serve` gets no CONFIG: everything on one origin,
 * `HOST`:`PORT` (default 127.0.0.1:5000), data under `REGISTRY_KIT_DATA` (./data).
 */
export function defaultDocument(env: Record<string, string | undefined>): Record<string, unknown> {
  const host = env.HOST || "127.0.0.1";
  const port = env.PORT || "5000";
  const data = env.REGISTRY_KIT_DATA || "./data";
  return {
    version: "0.1",
    http: { addr: `${host.includes(":") ? `[${host}]` : host}:${port}`, headers: { "X-Content-Type-Options": ["nosniff"] } },
    storage: { filesystem: { rootdirectory: `${data}/registry` } },
    registrykit: { keydirectory: `${data}/keys`, tokenservice: {}, users: {} },
  };
}

/**
 * Validate and default a configuration document (or the built-in defaults),
 * after applying `REGISTRY_*` environment overrides. Throws {@link ConfigError}
 * naming the first invalid key.
 */
export function resolveConfig(input: ResolveInput): Resolved {
  const env = input.env ?? {};
  const base = input.document === undefined ? defaultDocument(env) : input.document;
  if (!isMap(base)) throw new ConfigError("config", "the top level must be a map of sections");
  const { document: doc, sources } = applyEnvOverrides(base, env, parseYaml);
  const named = (key: string): string => (sources.has(key) ? `${key} (from ${sources.get(key)})` : key);
  const warnings: string[] = [];
  for (const finding of checkKeys(doc)) {
    const key = named(finding.key);
    if (finding.kind === "refused") throw new ConfigError(key, "is not supported by registry-kit (refusing to start without it)");
    if (finding.kind === "not-a-map") throw new ConfigError(key, "expected a map");
    warnings.push(finding.kind === "unknown" ? `${key}: unknown key, ignored` : `${key}: not supported by registry-kit, ignored`);
  }
  const get = (key: string): unknown => key.split(".").reduce<unknown>((node, k) => (isMap(node) ? node[k] : undefined), doc);
  const opt = <T>(key: string, parse: (key: string, value: unknown) => T): T | undefined => {
    const value = get(key);
    return value === undefined || value === null ? undefined : parse(named(key), value);
  };
  const abs = (p: string): string => path.resolve(input.cwd, p);
  const dataDir = env.REGISTRY_KIT_DATA || "./data";

  if (get("version") !== undefined && String(get("version")) !== "0.1") {
    throw new ConfigError(named("version"), `expected 0.1, got ${JSON.stringify(get("version"))}`);
  }
  const net = opt("http.net", str);
  if (net !== undefined && net !== "tcp") throw new ConfigError(named("http.net"), `only "tcp" is supported, got ${JSON.stringify(net)}`);
  const addr = opt("http.addr", parseAddr) ?? { host: "0.0.0.0", port: 5000 };

  const storage = resolveStorage(doc, named, abs, opt, env);
  const auth = resolveAuth(doc, get, opt, named, abs);
  const tokenServiceDoc = get("registrykit.tokenservice");
  const tokenServiceOn = tokenServiceDoc !== undefined && (opt("registrykit.tokenservice.enabled", bool) ?? true);
  const usersOn = get("registrykit.users") !== undefined && (opt("registrykit.users.enabled", bool) ?? true);

  let tokenService: TokenServiceConfig | undefined;
  if (tokenServiceOn) {
    const key = opt("registrykit.tokenservice.key", str);
    const certificate = opt("registrykit.tokenservice.certificate", str);
    if ((key === undefined) !== (certificate === undefined)) {
      throw new ConfigError(named(key === undefined ? "registrykit.tokenservice.key" : "registrykit.tokenservice.certificate"),
        "registrykit.tokenservice.key and .certificate must be given together");
    }
    tokenService = {
      path: opt("registrykit.tokenservice.path", pathPrefix) ?? DEFAULT_TOKEN_PATH,
      expiration: Math.round((opt("registrykit.tokenservice.expiration", duration) ?? 300_000) / 1000),
      publicRepositories: opt("registrykit.tokenservice.publicrepositories", stringList) ?? [],
      ...(key !== undefined && certificate !== undefined ? { key: abs(key), certificate: abs(certificate) } : {}),
    };
    if (tokenService.expiration < 1) throw new ConfigError(named("registrykit.tokenservice.expiration"), "must be at least 1s");
  }

  const fullAuth = completeAuth(auth, tokenService, named);
  const verify = resolveVerifySchedule(get, opt, named);
  const publicUrl = opt("http.host", httpUrl);
  const config: AllInOneConfig = {
    source: input.document === undefined ? "defaults" : "file",
    http: {
      host: addr.host,
      port: addr.port,
      ...(publicUrl !== undefined ? { publicUrl: publicUrl.replace(/\/+$/, "") } : {}),
      ...(get("http.secret") !== undefined ? { secret: opt("http.secret", str) } : {}),
      headers: headerMap(named("http.headers"), get("http.headers")),
      drainTimeout: opt("http.draintimeout", duration) ?? 10_000,
      trustProxy: opt("registrykit.trustproxy", bool) ?? false,
    },
    storage,
    deleteEnabled: opt("storage.delete.enabled", bool) ?? false,
    catalogMaxEntries: opt("catalog.maxentries", positiveInt) ?? 1000,
    log: {
      level: opt("log.level", logLevel) ?? "info",
      accessLog: !(opt("log.accesslog.disabled", bool) ?? false),
    },
    ...(fullAuth ? { auth: fullAuth } : {}),
    ...(tokenService ? { tokenService } : {}),
    ...(usersOn
      ? {
          users: {
            prefix: opt("registrykit.users.prefix", pathPrefix) ?? DEFAULT_USERS_PREFIX,
            selfRegistration: opt("registrykit.users.selfregistration", bool) ?? false,
            adminUsername: opt("registrykit.users.admin.username", str) ?? (env.REGISTRY_KIT_ADMIN_USER || "admin"),
            ...adminPassword(opt("registrykit.users.admin.password", str) ?? env.REGISTRY_KIT_ADMIN_PASSWORD),
          },
        }
      : {}),
    keyDirectory: abs(opt("registrykit.keydirectory", str) ?? `${dataDir}/keys`),
    ...(verify ? { verify } : {}),
    uploads: resolveUploads(opt, named),
  };
  checkPaths(config, named);
  if (!config.auth) warnings.push("auth: no authentication configured; anyone who can reach the server can push and pull");
  if (config.storage.driver === "inmemory" && config.users) warnings.push("storage.inmemory: users are kept in memory and lost at exit");
  return { config, warnings };
}

function adminPassword(password: string | undefined): { adminPassword?: string } {
  return password ? { adminPassword: password } : {};
}

function resolveStorage(
  doc: Record<string, unknown>,
  named: (key: string) => string,
  abs: (p: string) => string,
  opt: <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined,
  env: Record<string, string | undefined>,
): AllInOneConfig["storage"] {
  const storage = doc.storage;
  if (storage === undefined || storage === null) throw new ConfigError("storage", "a storage driver is required (filesystem, s3 or inmemory)");
  if (!isMap(storage)) throw new ConfigError(named("storage"), "expected a map");
  const drivers = Object.keys(storage).filter((k) => !STORAGE_OPTIONS.has(k));
  if (drivers.length !== 1) {
    throw new ConfigError(named("storage"), `exactly one storage driver is required, found ${drivers.length === 0 ? "none" : drivers.join(", ")}` +
      " (REGISTRY_STORAGE=<driver> selects one)");
  }
  if (drivers[0] === "inmemory") return { driver: "inmemory" };
  if (drivers[0] === "s3") return resolveS3(named, opt, env);
  const fsParams = storage.filesystem;
  const root = isMap(fsParams) ? fsParams.rootdirectory : undefined;
  // Distribution's default root, made relative so that a plain config works without root rights.
  return { driver: "filesystem", rootDirectory: abs(root === undefined || root === null ? "/var/lib/registry" : str(named("storage.filesystem.rootdirectory"), root)) };
}

const MiB = 1024 * 1024;

/**
 * `storage.s3`, with Distribution's key names. `region` and `bucket` are
 * required (as in Distribution); `accesskey`/`secretkey` default to the
 * `AWS_*` variables; `v4auth: false` and server-side encryption are refused
 * rather than silently dropped.
 */
function resolveS3(
  named: (key: string) => string,
  opt: <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined,
  env: Record<string, string | undefined>,
): S3StorageConfig {
  const k = (key: string) => `storage.s3.${key}`;
  const bucket = opt(k("bucket"), str);
  if (bucket === undefined) throw new ConfigError(named(k("bucket")), "is required");
  if (bucket.length > 255 || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(bucket)) {
    throw new ConfigError(named(k("bucket")), `not a valid bucket name: ${JSON.stringify(bucket)}`);
  }
  const region = opt(k("region"), str);
  if (region === undefined) {
    throw new ConfigError(named(k("region")), "is required (as in Distribution; radosgw and MinIO accept e.g. us-east-1)");
  }
  if (!/^[A-Za-z0-9-]+$/.test(region)) throw new ConfigError(named(k("region")), `not a valid region: ${JSON.stringify(region)}`);

  if (opt(k("v4auth"), bool) === false) {
    throw new ConfigError(named(k("v4auth")), "only AWS Signature Version 4 is supported; remove the key or set it to true");
  }
  if (opt(k("encrypt"), bool) === true || opt(k("keyid"), str) !== undefined) {
    const key = opt(k("encrypt"), bool) === true ? k("encrypt") : k("keyid");
    throw new ConfigError(named(key),
      "server-side encryption per request is not supported by registry-kit (refusing to start without it); " +
      "use the bucket's default encryption instead and remove the key");
  }
  const secure = opt(k("secure"), bool) ?? true;

  let endpoint: string | undefined;
  const endpointText = opt(k("regionendpoint"), str);
  if (endpointText !== undefined) {
    const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(endpointText) ? endpointText : `${secure ? "https" : "http"}://${endpointText}`;
    let url: URL;
    try {
      url = new URL(withScheme);
    } catch {
      throw new ConfigError(named(k("regionendpoint")), `expected a URL such as "https://s3.example.com", got ${JSON.stringify(endpointText)}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new ConfigError(named(k("regionendpoint")), `expected an http or https URL, got ${JSON.stringify(endpointText)}`);
    }
    if (url.pathname !== "/" || url.search !== "" || url.username !== "" || url.password !== "") {
      throw new ConfigError(named(k("regionendpoint")), "expected only scheme, host and port (the bucket goes in storage.s3.bucket)");
    }
    if (url.protocol === "http:" && secure && !isLoopbackHost(url.hostname)) {
      throw new ConfigError(named(k("regionendpoint")),
        "plain http to a host that is not loopback; use https, or set storage.s3.secure: false to allow it");
    }
    endpoint = url.origin;
  } else if (!secure) {
    endpoint = `http://s3.${region}.amazonaws.com`;
  }

  const fileKey = opt(k("accesskey"), str);
  const fileSecret = opt(k("secretkey"), str);
  if ((fileKey === undefined) !== (fileSecret === undefined)) {
    throw new ConfigError(named(fileKey === undefined ? k("accesskey") : k("secretkey")), "storage.s3.accesskey and .secretkey must be given together");
  }
  const fileToken = opt(k("sessiontoken"), str);
  let credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  if (fileKey !== undefined && fileSecret !== undefined) {
    credentials = { accessKeyId: fileKey, secretAccessKey: fileSecret, ...(fileToken !== undefined ? { sessionToken: fileToken } : {}) };
  } else if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    const token = fileToken ?? (env.AWS_SESSION_TOKEN || undefined);
    credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(token !== undefined ? { sessionToken: token } : {}) };
  } else {
    throw new ConfigError(named(k("accesskey")),
      "credentials are required: storage.s3.accesskey and .secretkey (or REGISTRY_STORAGE_S3_ACCESSKEY/_SECRETKEY, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)");
  }

  let rootDirectory: string | undefined;
  const rootText = opt(k("rootdirectory"), str);
  if (rootText !== undefined) {
    const trimmed = rootText.replace(/^\/+|\/+$/g, "");
    if (trimmed !== "" && (!/^[A-Za-z0-9._@:+=/-]+$/.test(trimmed) || trimmed.split("/").some((s) => s === "" || s === "." || s === ".."))) {
      throw new ConfigError(named(k("rootdirectory")), `expected a key prefix such as "registry" or "/prod/registry", got ${JSON.stringify(rootText)}`);
    }
    if (trimmed !== "") rootDirectory = trimmed;
  }

  const partSize = opt(k("chunksize"), positiveInt);
  if (partSize !== undefined && (partSize < 5 * MiB || partSize > 5 * 1024 * MiB)) {
    throw new ConfigError(named(k("chunksize")), `must be from 5242880 (5 MiB) to 5368709120 (5 GiB) bytes, got ${partSize}`);
  }
  const forcePathStyle = opt(k("forcepathstyle"), bool);

  return {
    driver: "s3",
    bucket,
    region,
    ...(endpoint !== undefined ? { endpoint } : {}),
    // s3Storage() defaults path style on for any endpoint; an AWS endpoint we built keeps virtual-hosted style
    ...(forcePathStyle !== undefined ? { forcePathStyle } : endpointText === undefined && endpoint !== undefined ? { forcePathStyle: false } : {}),
    ...credentials,
    ...(rootDirectory !== undefined ? { rootDirectory } : {}),
    ...(partSize !== undefined ? { partSize } : {}),
    allowHttp: !secure,
  };
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function resolveAuth(
  doc: Record<string, unknown>,
  get: (key: string) => unknown,
  opt: <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined,
  named: (key: string) => string,
  abs: (p: string) => string,
): Partial<TokenAuthConfig> | undefined {
  if (doc.auth === undefined || doc.auth === null) return undefined;
  if (get("auth.token") === undefined) return undefined;
  const bundle = opt("auth.token.rootcertbundle", str);
  return {
    ...(get("auth.token.realm") !== undefined ? { realm: opt("auth.token.realm", httpUrl) } : {}),
    ...(get("auth.token.service") !== undefined ? { service: opt("auth.token.service", str) } : {}),
    ...(get("auth.token.issuer") !== undefined ? { issuer: opt("auth.token.issuer", str) } : {}),
    ...(bundle !== undefined ? { rootCertBundle: abs(bundle) } : {}),
  };
}

/**
 * With our own token service every `auth.token` key has a default. Without
 * it (an external token service) all four are required, as in Distribution.
 */
function completeAuth(
  auth: Partial<TokenAuthConfig> | undefined,
  tokenService: TokenServiceConfig | undefined,
  named: (key: string) => string,
): TokenAuthConfig | undefined {
  if (tokenService) {
    return {
      ...(auth?.realm !== undefined ? { realm: auth.realm } : {}),
      service: auth?.service ?? DEFAULT_SERVICE,
      issuer: auth?.issuer ?? DEFAULT_SERVICE,
      ...(auth?.rootCertBundle !== undefined ? { rootCertBundle: auth.rootCertBundle } : {}),
    };
  }
  if (!auth) return undefined;
  for (const key of ["realm", "service", "issuer", "rootcertbundle"] as const) {
    const value = key === "rootcertbundle" ? auth.rootCertBundle : auth[key];
    if (value === undefined) {
      throw new ConfigError(named(`auth.token.${key}`),
        "is required for an external token service (or enable registry-kit's own with a registrykit.tokenservice section)");
    }
  }
  return auth as TokenAuthConfig;
}

function checkPaths(config: AllInOneConfig, named: (key: string) => string): void {
  const paths: [string, string | undefined][] = [
    ["registrykit.tokenservice.path", config.tokenService?.path],
    ["registrykit.users.prefix", config.users && `${config.users.prefix}/users`],
  ];
  for (const [key, value] of paths) {
    if (value === undefined) continue;
    if (value === "/v2" || value.startsWith("/v2/")) throw new ConfigError(named(key), "cannot be under /v2, which the registry owns");
  }
  const usersPath = config.users && `${config.users.prefix}/users`;
  if (config.tokenService && usersPath && (config.tokenService.path === usersPath || config.tokenService.path.startsWith(`${usersPath}/`))) {
    throw new ConfigError(named("registrykit.tokenservice.path"), `must not be inside the users API (${usersPath})`);
  }
}
