/**
 * `registry-kit/server`: what `registry-kit serve` runs, as a library, for
 * mounting the whole server inside an application of your own (Express, Hono,
 * `node:http`; see `examples/`).
 *
 * - {@link createAllInOne} composes the registry, its token service and the
 *   management API into one fetch handler, from an {@link AllInOneConfig};
 * - {@link parseConfigText} and {@link resolveConfig} read a Distribution
 *   `config.yml` (plus the `registrykit` section and the `REGISTRY_*`
 *   environment overrides) into that configuration, or give the built-in
 *   defaults when there is no file.
 *
 * Node only: the composition opens filesystem storage and keeps its keys on
 * disk. The configuration functions read no files and touch no process state;
 * the caller passes the text, the environment and the directory that relative
 * paths are resolved against. The reference of every key is
 * docs/configuration.md.
 *
 * @example
 * ```ts
 * import { createAllInOne, resolveConfig } from "registry-kit/server";
 *
 * const { config, warnings } = resolveConfig({ env: process.env, cwd: process.cwd() });
 * const server = await createAllInOne(config, { origin: "http://127.0.0.1:5000" });
 * // server.handler: (request: Request) => Promise<Response>, for /v2/, /service/token and /api/users
 * ```
 *
 * @module
 */
export { createAllInOne, managementAudience } from "./all-in-one/all-in-one.js";
export type { AllInOne, AllInOneInfo, AllInOneOptions } from "./all-in-one/all-in-one.js";
export { ConfigError, parseConfigText, resolveConfig } from "./config/config.js";
export type {
  AllInOneConfig, AzureStorageConfig, CliLogLevel, GcScheduleConfig, HtpasswdAuthConfig, HttpTlsConfig, PolicyConfig, ProxyUpstreamConfig, ResolveInput, Resolved,
  S3StorageConfig,
  TokenAuthConfig, TokenServiceConfig, UiConfig, UploadsConfig,
  UsersConfig, VerifyScheduleConfig,
} from "./config/config.js";
export type { ListenAddress } from "./config/config-values.js";
export type { DebugConfig, FileHealthConfig, HealthConfig, HttpHealthConfig, StorageHealthConfig, TcpHealthConfig } from "./config/config-debug.js";
export type { NotificationsConfig } from "./config/config-notifications.js";
