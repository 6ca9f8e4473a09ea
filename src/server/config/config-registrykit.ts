/**
 * registry-kit's own services in the `registrykit` section: the token service
 * (`registrykit.tokenservice`) and the management API (`registrykit.users`),
 * each on when its section is present (unless `enabled: false`), and the
 * check that their paths stay clear of `/v2` and of each other.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import type { AllInOneConfig, TokenServiceConfig, UsersConfig } from "./config-types.js";
import { bool, ConfigError, duration, pathPrefix, stringList, str } from "./config-values.js";

/** Where the token service answers by default. */
export const DEFAULT_TOKEN_PATH = "/service/token";
/** The management API's routes are `<prefix>/users`; this is the default prefix. */
export const DEFAULT_USERS_PREFIX = "/api";

/** Whether the section `key` is present and not `enabled: false`. */
export function sectionEnabled({ get, opt }: ConfigReader, key: string): boolean {
  return get(key) !== undefined && (opt(`${key}.enabled`, bool) ?? true);
}

/** Read `registrykit.tokenservice` (call only when the section is enabled). */
export function resolveTokenService({ opt, named, abs }: ConfigReader): TokenServiceConfig {
  const key = opt("registrykit.tokenservice.key", str);
  const certificate = opt("registrykit.tokenservice.certificate", str);
  if ((key === undefined) !== (certificate === undefined)) {
    throw new ConfigError(named(key === undefined ? "registrykit.tokenservice.key" : "registrykit.tokenservice.certificate"),
      "registrykit.tokenservice.key and .certificate must be given together");
  }
  const tokenService: TokenServiceConfig = {
    path: opt("registrykit.tokenservice.path", pathPrefix) ?? DEFAULT_TOKEN_PATH,
    expiration: Math.round((opt("registrykit.tokenservice.expiration", duration) ?? 300_000) / 1000),
    publicRepositories: opt("registrykit.tokenservice.publicrepositories", stringList) ?? [],
    ...(key !== undefined && certificate !== undefined ? { key: abs(key), certificate: abs(certificate) } : {}),
    ...(opt("registrykit.tokenservice.x5c", bool) === false ? { x5c: false } : {}),
  };
  if (tokenService.expiration < 1) throw new ConfigError(named("registrykit.tokenservice.expiration"), "must be at least 1s");
  return tokenService;
}

/** Read `registrykit.users` (call only when the section is enabled); the administrator defaults from the environment. */
export function resolveUsers({ opt, env }: ConfigReader): UsersConfig {
  const prefix = opt("registrykit.users.prefix", pathPrefix) ?? DEFAULT_USERS_PREFIX;
  const selfRegistration = opt("registrykit.users.selfregistration", bool) ?? false;
  const adminUsername = opt("registrykit.users.admin.username", str) ?? (env.REGISTRY_KIT_ADMIN_USER || "admin");
  const adminPassword = opt("registrykit.users.admin.password", str) ?? env.REGISTRY_KIT_ADMIN_PASSWORD;
  return { prefix, selfRegistration, adminUsername, ...(adminPassword ? { adminPassword } : {}) };
}

/** `registrykit.ui`: on by default when the server has users and its own token service (the page needs both). */
export function resolveUi({ get, opt, named }: ConfigReader, usersOn: boolean, tokenServiceOn: boolean): { prefix: string } | undefined {
  const enabled = opt("registrykit.ui.enabled", bool);
  if (enabled === false) return undefined;
  if (!usersOn || !tokenServiceOn) {
    if (enabled === true || get("registrykit.ui") !== undefined) {
      throw new ConfigError(named("registrykit.ui"), "needs registrykit.users and registrykit.tokenservice (the page signs users in and calls the services with their tokens)");
    }
    return undefined;
  }
  return { prefix: opt("registrykit.ui.prefix", pathPrefix) ?? "/ui" };
}

/** The token service and the users API must not sit under `/v2` (the registry's) nor one inside the other. */
export function checkPaths(config: AllInOneConfig, named: (key: string) => string): void {
  const paths: [string, string | undefined][] = [
    ["registrykit.tokenservice.path", config.tokenService?.path],
    ["registrykit.users.prefix", config.users && `${config.users.prefix}/users`],
    ["registrykit.ui.prefix", config.ui?.prefix],
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
