/**
 * The all-in-one server's configuration: a CNCF Distribution `config.yml`
 * (YAML or JSON) plus registry-kit's own `registrykit` section, with
 * Distribution's `REGISTRY_*` environment overrides. Pure: it reads no files
 * and touches no process state, so every rule is unit-tested.
 * The reference for users is docs/configuration.md.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { completeAuth, resolveAuth, resolveHtpasswd } from "./config-auth.js";
import { applyEnvOverrides, ignoredVariableWarning, isMap } from "./config-env.js";
import { resolveHttp, resolveListen } from "./config-http.js";
import { resolveDebug, resolveHealth } from "./config-debug.js";
import { configReader, type ConfigReader } from "./config-reader.js";
import { resolveValidation } from "./config-validation.js";
import { checkPaths, resolveTokenService, resolveUi, resolveUsers, sectionEnabled } from "./config-registrykit.js";
import { checkKeys } from "./config-schema.js";
import { resolveStorage } from "./config-storage.js";
import type { AllInOneConfig, ResolveInput, Resolved } from "./config-types.js";
import { bool, ConfigError, logLevel, positiveInt, str } from "./config-values.js";
import { resolveVerifySchedule } from "./config-verify.js";
import { resolveUploads } from "./config-uploads.js";
import { resolveProxy } from "./config-proxy.js";
import { resolveNotifications } from "./config-notifications.js";
import { resolveGcSchedule, resolvePolicy, resolveRetention } from "./config-policy.js";

export { ConfigError } from "./config-values.js";
export type { CliLogLevel } from "./config-values.js";
export type { VerifyScheduleConfig } from "./config-verify.js";
export type { UploadsConfig } from "./config-uploads.js";
export type { ProxyUpstreamConfig } from "./config-proxy.js";
export type { NotificationsConfig } from "./config-notifications.js";
export type { GcScheduleConfig, PolicyConfig } from "./config-policy.js";

export type {
  AllInOneConfig, AzureStorageConfig, HtpasswdAuthConfig, HttpTlsConfig, ResolveInput, Resolved, S3StorageConfig, TokenAuthConfig, TokenServiceConfig, UiConfig, UsersConfig,
} from "./config-types.js";

export { DEFAULT_SERVICE } from "./config-auth.js";
export { DEFAULT_TOKEN_PATH, DEFAULT_USERS_PREFIX } from "./config-registrykit.js";

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
  const { document: doc, sources, ignored } = applyEnvOverrides(base, env, parseYaml);
  const reader = configReader(doc, sources, input.cwd, env);
  const { get, opt, named } = reader;
  const warnings = [...ignored.map(ignoredVariableWarning), ...schemaWarnings(reader)];

  // The sections are read in this order so that, of several bad keys, the same one is reported first.
  if (get("version") !== undefined && String(get("version")) !== "0.1") {
    throw new ConfigError(named("version"), `expected 0.1, got ${JSON.stringify(get("version"))}`);
  }
  if (opt("compatibility.schema1.enabled", bool) === true) {
    throw new ConfigError(named("compatibility.schema1.enabled"),
      "Docker schema1 manifests are not supported by registry-kit (Distribution 3 removed them too); remove the key or set it to false");
  }
  const addr = resolveListen(reader);
  const storage = resolveStorage(reader);
  const auth = resolveAuth(reader);
  const htpasswd = resolveHtpasswd(reader);
  const tokenServiceOn = sectionEnabled(reader, "registrykit.tokenservice");
  const usersOn = sectionEnabled(reader, "registrykit.users");
  if (htpasswd && tokenServiceOn) {
    throw new ConfigError(named("auth.htpasswd"),
      "cannot be used together with registrykit.tokenservice: with htpasswd the registry checks Basic credentials itself; remove one of them");
  }
  const tokenService = tokenServiceOn ? resolveTokenService(reader) : undefined;
  const fullAuth = completeAuth(auth, tokenService, named);
  const verify = resolveVerifySchedule(get, opt, named);
  const health = resolveHealth(reader);
  const notifications = resolveNotifications(reader, warnings);
  const config: AllInOneConfig = {
    source: input.document === undefined ? "defaults" : "file",
    http: { ...resolveHttp(reader, addr), ...optional("debug", resolveDebug(reader)) },
    ...optional("health", health),
    storage,
    deleteEnabled: opt("storage.delete.enabled", bool) ?? false,
    redirect: !(opt("storage.redirect.disable", bool) ?? false),
    readOnly: opt("storage.maintenance.readonly.enabled", bool) ?? false,
    validation: resolveValidation(reader),
    catalogMaxEntries: opt("catalog.maxentries", positiveInt) ?? 1000,
    log: {
      level: opt("log.level", logLevel) ?? "info",
      accessLog: !(opt("log.accesslog.disabled", bool) ?? false),
    },
    ...(fullAuth ? { auth: fullAuth } : {}),
    ...(htpasswd ? { htpasswd } : {}),
    ...(tokenService ? { tokenService } : {}),
    ...(usersOn ? { users: resolveUsers(reader) } : {}),
    ...withUi(resolveUi(reader, usersOn, tokenService !== undefined)),
    keyDirectory: reader.abs(opt("registrykit.keydirectory", str) ?? `${env.REGISTRY_KIT_DATA || "./data"}/keys`),
    ...(input.document !== undefined && get("registrykit.keydirectory") === undefined && !env.REGISTRY_KIT_DATA ? { keyDirectoryOptional: true } : {}),
    ...(verify ? { verify } : {}),
    uploads: resolveUploads(opt, named),
    ...(notifications ? { notifications } : {}),
  };
  const proxy = resolveProxy(reader);
  if (proxy) config.proxy = proxy;
  const policy = resolvePolicy(reader);
  if (policy) config.policy = policy;
  const retention = resolveRetention(reader);
  if (retention) config.retention = retention;
  const gc = resolveGcSchedule(reader);
  if (gc) config.gc = gc;
  checkPaths(config, named);
  if (config.http.tls && config.http.h2c) warnings.push("http.h2c.enabled: no effect with http.tls (HTTP/2 over TLS is negotiated by ALPN; see http.http2.disabled)");
  if (!config.auth && !config.htpasswd) warnings.push("auth: no authentication configured; anyone who can reach the server can push and pull");
  if (config.storage.driver === "inmemory" && config.users) warnings.push("storage.inmemory: users are kept in memory and lost at exit");
  return { config, warnings };
}

function withUi(ui: { prefix: string } | undefined): { ui?: { prefix: string } } {
  return ui ? { ui } : {};
}

/** `{ [key]: value }`, or `{}` when `value` is undefined (optional properties stay absent). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A warning per unknown or ignored key; throws on a refused key or a section that is not a map. */
function schemaWarnings({ doc, named }: ConfigReader): string[] {
  const warnings: string[] = [];
  for (const finding of checkKeys(doc)) {
    const key = named(finding.key);
    if (finding.kind === "refused") throw new ConfigError(key, "is not supported by registry-kit (refusing to start without it)");
    if (finding.kind === "not-a-map") throw new ConfigError(key, "expected a map");
    const hint = finding.nearest ? ` (did you mean ${JSON.stringify(finding.nearest)}?)` : "";
    if (finding.kind === "unknown-closed") {
      const what = finding.key.startsWith("storage.") ? "not a known storage driver or storage option" : "not a known configuration section";
      throw new ConfigError(key, `${what}${hint}; refusing to start rather than ignore it`);
    }
    warnings.push(finding.kind === "unknown" ? `${key}: unknown key, ignored${hint}` : `${key}: not supported by registry-kit, ignored`);
  }
  return warnings;
}
