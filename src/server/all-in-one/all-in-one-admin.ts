/**
 * The registry's administration routes of the management API, beside
 * `<prefix>/users` and authenticated the same way; administrators only:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `<prefix>/quotas[?repository=NAME]` | the usage of each configured quota (`registrykit.policy.quotas`) |
 * | DELETE | `<prefix>/repositories/NAME[?force=true]` | delete a repository (tags, manifests, links, uploads; blobs go with the next GC) |
 *
 * Errors have the management API's shape, `{"errors":[{"code","message"}]}`.
 *
 * @module
 */
import type { EventHook } from "../../events/hook.js";
import { json, methodNotAllowed } from "../../http/response.js";
import type { LogHook } from "../../http/log.js";
import { deleteRepository, RegistryError, type Quota } from "../../registry/index.js";
import type { StorageDriver } from "../../storage/driver.js";
import type { Authenticator, UserStore } from "../../users/index.js";
import type { ConfiguredPolicies } from "./all-in-one-policy.js";
import type { Route } from "./all-in-one-routes.js";

type Code = "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "BAD_REQUEST" | "CONFLICT" | "INTERNAL_ERROR";
const STATUS: Record<Code, number> = { UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, BAD_REQUEST: 400, CONFLICT: 409, INTERNAL_ERROR: 500 };

function failure(code: Code, message: string): Response {
  const headers: HeadersInit = code === "UNAUTHORIZED" ? { "www-authenticate": 'Basic realm="registry-kit"' } : {};
  return json({ errors: [{ code, message }] }, STATUS[code], headers);
}

/** What the admin routes work on. */
export interface AdminRouteOptions {
  /** The management API's prefix (`registrykit.users.prefix`). */
  prefix: string;
  /** The registry's storage. */
  storage: StorageDriver;
  /** The user store, for the caller's current role. */
  users: UserStore;
  /** Who is calling (the management API's authenticator). */
  authenticate: Authenticator;
  /** The configured write policies. */
  policies: ConfiguredPolicies;
  /** Receives one event per repository deleted. */
  log: LogHook;
  /** The server's event hooks: a repository delete emits `repository.emptied`. */
  onEvent?: EventHook;
}

/** The `<prefix>/quotas` and `<prefix>/repositories/…` routes. */
export function adminRoute(options: AdminRouteOptions): Route {
  const quotas = `${options.prefix}/quotas`;
  const repositories = `${options.prefix}/repositories/`;
  return {
    matches: (path) => path === quotas || path === `${quotas}/` || path.startsWith(repositories),
    // A repository delete changes repositories: read-only mode refuses it (all-in-one-routes.ts).
    changes: (request) => request.method.toUpperCase() === "DELETE" && new URL(request.url).pathname.startsWith(repositories),
    handler: async (request) => {
      const url = new URL(request.url);
      const method = request.method.toUpperCase();
      const quotaPath = !url.pathname.startsWith(repositories);
      const allowed = quotaPath ? ["GET", "HEAD"] : ["DELETE"];
      if (!allowed.includes(method)) return methodNotAllowed(allowed, { errors: [{ code: "METHOD_NOT_ALLOWED", message: "method not allowed" }] });
      const caller = await options.authenticate(request);
      if (!caller) return failure("UNAUTHORIZED", "authentication required");
      const record = caller.id !== undefined ? await options.users.getById(caller.id) : await options.users.getByUsername(caller.name);
      if (!record || record.username.toLowerCase() !== caller.name.toLowerCase()) return failure("UNAUTHORIZED", "invalid credentials");
      if (!record.sysadmin) return failure("FORBIDDEN", "administrators only");
      try {
        if (quotaPath) return await quotaUsage(options.policies.quota, options.storage, url);
        return await removeRepository(options, decodeURIComponent(url.pathname.slice(repositories.length)), url, record.username);
      } catch (error) {
        options.log({ level: "error", msg: "admin route failed", path: url.pathname, error: error instanceof Error ? error.message : String(error) });
        return failure("INTERNAL_ERROR", "internal error");
      }
    },
  };
}

async function quotaUsage(quota: Quota | undefined, storage: StorageDriver, url: URL): Promise<Response> {
  const repository = url.searchParams.get("repository") ?? undefined;
  return json({ quotas: quota ? await quota.usage(storage, repository) : [] });
}

async function removeRepository(options: AdminRouteOptions, name: string, url: URL, caller: string): Promise<Response> {
  const force = url.searchParams.get("force") === "true";
  try {
    const report = await deleteRepository(options.storage, name, { policies: options.policies.all, force, caller, log: options.log, ...(options.onEvent ? { onEvent: options.onEvent } : {}) });
    return report.found ? json(report) : failure("NOT_FOUND", `repository ${name} does not exist`);
  } catch (error) {
    if (error instanceof RegistryError && error.code === "NAME_INVALID") return failure("BAD_REQUEST", "invalid repository name");
    if (error instanceof RegistryError && error.code === "DENIED") return failure("CONFLICT", `${error.message}; add ?force=true to delete it anyway`);
    throw error;
  }
}
