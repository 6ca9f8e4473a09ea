/**
 * The composition of the all-in-one server: which handler owns which path,
 * built from an {@link AllInOneConfig}. It opens storage and reads or creates
 * keys, but never listens on a port, so it is unit-tested by calling the
 * handler directly.
 *
 * | Path | Handler |
 * |---|---|
 * | `/v2`, `/v2/…` | the registry |
 * | `registrykit.tokenservice.path` (default `/service/token`) | the token service, when enabled |
 * | `/.well-known/jwks.json` | the token service's keys, when enabled |
 * | `<registrykit.users.prefix>/users…` (default `/api/users`) | the management API, when enabled |
 * | `<registrykit.users.prefix>/quotas`, `…/repositories/NAME` | its administration routes (all-in-one-admin.ts) |
 * | `<registrykit.users.prefix>/audit` | the audit log, administrators only (all-in-one-audit.ts) |
 * | `registrykit.ui.prefix` (default `/ui`) and below | the web page, when users and the token service are on |
 * | `/` | 200, empty (Distribution's liveness route) |
 * | anything else | 404 |
 *
 * With `http.prefix` (e.g. `/my/registry`) every path but `/` is under it:
 * `/my/registry/v2/…`, `/my/registry/service/token`, and so on, and so are
 * the `Location` and `Link` headers and the default token realm.
 *
 * The management API accepts `Authorization: Basic` (checked against the
 * user store) and, when registry-kit serves its own token service, a Bearer
 * token from that service whose audience is {@link managementAudience}
 * (`<auth.token.service>-management`, e.g. `registry-kit-management`).
 *
 * @module
 */
import { createNotifier, type Notifier } from "../../events/index.js";
import { nodeWebhookPost } from "../../events/webhook-post.node.js";
import { silent, type LogHook } from "../../http/log.js";
import { instrumentHandler } from "../../http/metrics.js";
import { createRegistry } from "../../registry/index.js";
import type { StorageDriver } from "../../storage/driver.js";
import { storageUserStore } from "../../users/index.js";
import { jwksRoute, loadTokenKeys, managementAudience, registryAuthorizer, tokenServiceRoute, type TokenKeys } from "./all-in-one-auth.js";
import { startJobs } from "./all-in-one-jobs.js";
import { aliveRoute, pathRoute, routeHandler, underPrefix, type Route } from "./all-in-one-routes.js";
import type { AllInOne, AllInOneInfo, AllInOneOptions } from "./all-in-one-types.js";
import { uiRoute } from "./all-in-one-ui.js";
import { bootstrapFirstAdmin, managementAuthenticator, usersRoute } from "./all-in-one-users.js";
import { adminRoute } from "./all-in-one-admin.js";
import { configuredPolicies, startScheduledGc } from "./all-in-one-policy.js";
import type { AllInOneConfig } from "../config/config.js";
import { resolveUploadSecret, type UploadSecret } from "./key-material.js";
import { registryUpstream } from "../../client/index.js";
import type { PullThroughOptions } from "../../registry/index.js";
import type { ProxyUpstreamConfig } from "../config/config-proxy.js";
import { checkStorageAtStart, describeStorage, openStorage } from "./open-storage.js";
import { observability } from "./all-in-one-debug.js";
import { auditParts, auditRoute } from "./all-in-one-audit.js";
import { auditRegistryRefusals } from "./audit-registry.js";
import { apiDoor, guardRoute, tokenDoor, uiDoor } from "./sign-in-guard.js";

export { managementAudience } from "./all-in-one-auth.js";
export type { AllInOne, AllInOneInfo, AllInOneOptions } from "./all-in-one-types.js";
export { describeStorage, openStorage } from "./open-storage.js";

/**
 * Build the all-in-one handler from `config`: open the storage, read or create
 * the keys and the upload secret in the key directory, create the first
 * administrator when the user store is empty, and start the periodic jobs
 * (upload purge, verify) the configuration asks for. It does not listen:
 * serve `handler` with `registry-kit/node` or any framework, and call `close()`
 * at shutdown.
 */
export async function createAllInOne(given: AllInOneConfig, options: AllInOneOptions = {}): Promise<AllInOne> {
  const config = underPrefix(given);
  const prefix = config.http.prefix ?? "";
  const log = options.log ?? silent;
  const opened = options.storage ?? openStorage(config);
  if (!options.storage) await checkStorageAtStart(opened, config);
  const observed = observability(config, opened, log);
  const { metrics, storage } = observed;
  const uploadSecret = await resolveUploadSecret(config.http.secret, config.keyDirectory, config.keyDirectoryOptional ?? false);
  const users = config.users ? storageUserStore(storage) : undefined;
  const admin = users && config.users ? await bootstrapFirstAdmin(users, config.users, options.scrypt) : undefined;
  const token = config.tokenService ? await loadTokenKeys(config.tokenService, config.keyDirectory) : undefined;
  const auth = await registryAuthorizer(config, token?.keys, options.origin, log);
  const { notifier, audit, hooks, serviceHooks } = eventHooks(config, storage, log, options.onEvent);
  const policies = configuredPolicies(config, log);

  const registry = createRegistry({
    storage,
    ...(auth.authorize ? { authorize: auth.authorize } : {}),
    uploadSecret: uploadSecret.value,
    deleteEnabled: config.deleteEnabled,
    redirect: config.redirect,
    readOnly: config.readOnly ?? false,
    ...(config.validation ? { manifestValidation: config.validation } : {}),
    limits: {
      listEntries: config.catalogMaxEntries,
      uploadIdleSeconds: config.uploads.idleSeconds,
      uploadMaxAgeSeconds: Math.max(config.uploads.idleSeconds, LIBRARY_UPLOAD_MAX_AGE_SECONDS),
      ...config.uploads.limits,
    },
    log,
    ...(prefix ? { basePath: prefix } : {}),
    ...(metrics ? { metrics } : {}),
    ...(config.proxy ? { pullThrough: pullThroughOf(config.proxy, log) } : {}),
    onEvent: hooks,
    ...(policies.all.length > 0 ? { policies: policies.all } : {}),
  });
  // Bearer tokens for the management API: only from our own token service.
  const bearerAudience = config.tokenService && token && config.auth && users ? managementAudience(config.auth.service) : undefined;
  // Every route counted in the HTTP metrics under its own `handler` label, as the registry's and the users API's are.
  const measured = (route: Route, label: string): Route => (metrics ? { ...route, handler: instrumentHandler(route.handler, metrics, label) } : route);
  const routes: Route[] = [auditRegistryRefusals(pathRoute(`${prefix}/v2`, registry, true), audit.auditor), aliveRoute];
  if (config.tokenService && token && config.auth) {
    routes.push(guardRoute(tokenServiceRoute(config.tokenService, config.auth, token.keys, users, bearerAudience, log, metrics, serviceHooks, options.scrypt), tokenDoor, audit.guard));
    routes.push(measured(jwksRoute(token.keys, prefix), "jwks"));
  }
  if (users && config.users) {
    const bearer = bearerAudience && token && config.auth ? { audience: bearerAudience, issuer: config.auth.issuer, keys: token.keys } : undefined;
    const usersApi = usersRoute(config.users, users, bearer, log, metrics, serviceHooks, options.scrypt);
    const authenticate = managementAuthenticator(users, bearer, options.scrypt);
    routes.push(guardRoute(usersApi, apiDoor, audit.guard));
    routes.push(guardRoute(measured(adminRoute({ prefix: config.users.prefix, storage, users, authenticate, policies, log, onEvent: hooks }), "admin"), apiDoor, audit.guard));
    routes.push(guardRoute(measured(auditRoute(config.users.prefix, audit.log, users, authenticate), "audit"), apiDoor, audit.guard));
    if (config.ui && token && bearer) {
      const ui = uiRoute(config.ui.prefix, { config, storage, users, keys: token.keys, registry, usersHandler: usersApi.handler, uploadSecret: uploadSecret.value, scrypt: options.scrypt });
      routes.push(guardRoute(measured(ui, "ui"), uiDoor(config.ui.prefix), audit.guard));
    }
  }
  const handler = observed.gate(routeHandler(routes, config.http.headers, { readOnly: config.readOnly ?? false, ...(config.http.hsts ? { hsts: config.http.hsts } : {}) }));

  // Started last, so that a failed start-up leaves no timer behind.
  const jobs = startJobs(storage, config, log);
  const scheduledGc = startScheduledGc(storage, config, policies, log, metrics);
  observed.start();
  notifier?.start();
  return {
    handler,
    ...(observed.debugHandler ? { debugHandler: observed.debugHandler } : {}),
    close: async () => {
      observed.stop();
      await scheduledGc?.stop();
      await jobs.stop();
      await notifier?.close();
      await storage.close?.();
    },
    info: describeAllInOne(config, storageLine(config, options.storage ? opened.name : describeStorage(config.storage), storage), {
      auth: auth.info, token, bearerAudience, admin, uploadSecret,
    }),
  };
}

/**
 * The configured webhook notifier (not started yet), the audit log (docs/audit.md; its records also go out
 * through the notifier, as `audit` events), the registry's event hooks (notifier, audit, then the caller's) and
 * the other services' (audit, then the caller's).
 */
function eventHooks(config: AllInOneConfig, storage: StorageDriver, log: NonNullable<AllInOneOptions["log"]>, onEvent: AllInOneOptions["onEvent"]) {
  // The outbox lives in the registry's storage, under `_events/`, so a restart (or another process) delivers what is pending.
  const notifier: Notifier | undefined = config.notifications
    ? createNotifier({ storage, endpoints: config.notifications.endpoints, includeReferences: config.notifications.includeReferences, log, post: nodeWebhookPost({ worker: true }) })
    : undefined;
  const audit = auditParts(storage, config.http.trustProxy, log, notifier);
  const extra = onEvent === undefined ? [] : [onEvent].flat();
  return { notifier, audit, hooks: [...(notifier ? [notifier] : []), audit.auditor.sink, ...extra], serviceHooks: [audit.auditor.sink, ...extra] };
}

/** `createRegistry`'s default `limits.uploadMaxAgeSeconds`; a longer `uploadpurging.age` extends it. */
const LIBRARY_UPLOAD_MAX_AGE_SECONDS = 24 * 3600;

/** What {@link createAllInOne} built, for the banner (never secrets other than a generated admin password). */
function describeAllInOne(
  config: AllInOneConfig,
  storage: string,
  built: {
    auth: AllInOneInfo["auth"];
    token: TokenKeys | undefined;
    bearerAudience: string | undefined;
    admin: AllInOneInfo["admin"];
    uploadSecret: UploadSecret;
  },
): AllInOneInfo {
  const { token, bearerAudience, admin, uploadSecret } = built;
  return {
    registryPath: `${config.http.prefix ?? ""}/v2/`,
    storage,
    keyDirectory: config.keyDirectory,
    auth: built.auth,
    ...(token ? { tokenService: token.info } : {}),
    ...(config.users ? { users: { path: `${config.users.prefix}/users`, ...(bearerAudience ? { audience: bearerAudience } : {}) } } : {}),
    ...(admin ? { admin } : {}),
    uploadSecret: uploadSecretInfo(uploadSecret),
    ...(config.readOnly ? { readOnly: true as const } : {}),
    ...policiesInfo(config),
    ...(config.verify ? { verify: { intervalMs: config.verify.intervalMs, quarantine: config.verify.quarantine } } : {}),
    ...(config.ui ? { ui: { path: `${config.ui.prefix}/` } } : {}),
    ...(config.proxy
      ? { proxy: config.proxy.map((u) => ({ prefix: u.prefix, url: u.url, ttlSeconds: u.ttlSeconds, allowPush: u.allowPush, authenticated: u.credentials !== undefined })) }
      : {}),
  };
}

/** The banner's account of the policies in force; `{}` when there are none. */
function policiesInfo(config: AllInOneConfig): Pick<AllInOneInfo, "policies"> {
  const { policy, retention, gc } = config;
  const policies: NonNullable<AllInOneInfo["policies"]> = {
    ...(policy?.immutableTags ? { immutableTags: policy.immutableTags } : {}),
    ...(policy?.quotas ? { quotas: policy.quotas } : {}),
    ...(retention && retention.length > 0 ? { retentionRules: retention.length } : {}),
    ...(gc ? { gc: { intervalMs: gc.intervalMs, removeUntagged: gc.removeUntagged, dryRun: gc.dryRun } } : {}),
  };
  return Object.keys(policies).length > 0 ? { policies } : {};
}

/** The banner's account of the upload secret: never the secret itself. */
function uploadSecretInfo(secret: UploadSecret): AllInOneInfo["uploadSecret"] {
  if (secret.source === "file") return { source: "file", file: secret.file, created: secret.created };
  if (secret.source === "memory") return { source: "memory", created: true, reason: secret.reason };
  return { source: "config", created: false };
}

/** The banner's storage line, saying when blob GETs are redirected to the store (storage.redirect). */
function storageLine(config: AllInOneConfig, described: string, storage: StorageDriver): string {
  return config.redirect && storage.redirectURL ? `${described}; blob GETs redirect to presigned URLs` : described;
}

/** The configured upstreams as `createRegistry`'s pull-through options, each over HTTP. */
function pullThroughOf(upstreams: readonly ProxyUpstreamConfig[], log: LogHook): PullThroughOptions {
  return {
    upstreams: upstreams.map((u) => ({
      prefix: u.prefix,
      upstream: registryUpstream({ url: u.url, log, ...(u.credentials ? { credentials: u.credentials } : {}), ...(u.realms ? { realms: u.realms } : {}) }),
      ttlSeconds: u.ttlSeconds,
      allowPush: u.allowPush,
    })),
  };
}
