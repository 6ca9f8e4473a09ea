/**
 * The management service: `createUserService(options)` returns a fetch
 * handler for the user routes under a prefix (default `/api`):
 *
 * | Method | Path | Who |
 * |---|---|---|
 * | GET | `/api/users` | administrators |
 * | POST | `/api/users` | anyone with SelfRegistration, else administrators; AuthMode `db` only |
 * | GET | `/api/users/current` | any signed-in user |
 * | GET, PUT | `/api/users/{user_id}` | the user or an administrator |
 * | DELETE | `/api/users/{user_id}` | administrators (not themselves, not the last one) |
 * | PUT | `/api/users/{user_id}/password` | the user (with the old password) or an administrator; AuthMode `db` only |
 * | PUT | `/api/users/{user_id}/sysadmin` | administrators |
 *
 * See docs/management.md for bodies, answers and errors.
 *
 * @module
 */
import { eventEmitter, type EventHook } from "../events/hook.js";
import type { EventAction } from "../events/model.js";
import type { Principal } from "../auth/access.js";
import { methodNotAllowed } from "../http/response.js";
import { silent, type LogHook } from "../http/log.js";
import { StorageError } from "../storage/driver.js";
import { basicAuthenticator, type Authenticator } from "./authenticate.js";
import { DEFAULT_MAX_BODY_BYTES } from "./body.js";
import type { RouteContext, UserServiceSettings } from "./context.js";
import { storeCredentialCheck } from "./credential-check.js";
import { UserApiError, userErrorResponse, type UserErrorCode } from "./errors.js";
import { scryptParams, type ScryptParams } from "./password.js";
import type { UserRecord } from "./record.js";
import { PAGE_SIZE } from "./pagination.js";
import { ALLOWED_METHODS, matchRoute, normalizePrefix, type UserRoute } from "./router.js";
import { UserStoreError, type UserStore } from "./store.js";
import { passwordPolicy, type PasswordPolicy } from "./validation.js";
import { changePassword } from "./routes/change-password.js";
import { createUser } from "./routes/create-user.js";
import { deleteUser } from "./routes/delete-user.js";
import { getCurrentUser, getUser } from "./routes/get-user.js";
import { listUsers } from "./routes/list-users.js";
import { setSysadmin } from "./routes/set-sysadmin.js";
import { updateUser } from "./routes/update-user.js";

/** Options of {@link createUserService}. */
export interface UserServiceOptions {
  /** Where users live. */
  store: UserStore;
  /** Mount prefix; the routes are `<prefix>/users…`. Default `/api`. */
  prefix?: string;
  /** Whether anyone may create an account (POST /users). Default `false`. */
  selfRegistration?: boolean;
  /**
   * Authentication mode. `"db"` (default): this service owns passwords. Any
   * other value (e.g. `"ldap"`): POST /users and password changes answer 403.
   */
  authMode?: string;
  /**
   * Who is calling. Default: `Authorization: Basic` checked against the store
   * (`basicAuthenticator(storeCredentialCheck(store, { scrypt }))`). Combine with
   * `bearerAuthenticator` through `anyAuthenticator` to accept tokens too.
   */
  authenticate?: Authenticator;
  /** Realm of the `Www-Authenticate: Basic` challenge on 401. Default `registry-kit`. */
  realm?: string;
  /** Password rules for new passwords. Default `DEFAULT_PASSWORD_POLICY`. */
  passwordPolicy?: Partial<PasswordPolicy>;
  /** scrypt cost of new hashes (old hashes keep theirs). Default `DEFAULT_SCRYPT`. */
  scrypt?: Partial<ScryptParams>;
  /** Largest accepted request body in bytes (413 above). Default 16 KiB. */
  maxBodyBytes?: number;
  /** Largest `page_size` of `GET /users` (400 above). An integer from 1 to 10000. Default 100. */
  maxPageSize?: number;
  /** Log hook; never receives passwords or hashes. Default: silent. */
  log?: LogHook;
  /**
   * Receives `user.created`, `user.updated`, `user.deleted`,
   * `user.password_changed` and `user.admin_changed` after each successful
   * change. A function can neither fail nor slow a request.
   */
  onEvent?: EventHook;
}

/** A fetch handler. */
export type UserService = (request: Request) => Promise<Response>;

/** Create the management service handler. Requests outside `<prefix>/users` get 404. */
export function createUserService(options: UserServiceOptions): UserService {
  if (options.maxPageSize !== undefined && !(Number.isInteger(options.maxPageSize) && options.maxPageSize >= 1 && options.maxPageSize <= 10_000)) {
    throw new RangeError("maxPageSize must be an integer from 1 to 10000");
  }
  const scrypt = scryptParams(options.scrypt);
  const settings: UserServiceSettings = {
    store: options.store,
    prefix: normalizePrefix(options.prefix ?? "/api"),
    selfRegistration: options.selfRegistration ?? false,
    authMode: options.authMode ?? "db",
    passwordPolicy: passwordPolicy(options.passwordPolicy),
    scrypt,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxPageSize: options.maxPageSize ?? PAGE_SIZE.max,
    log: options.log ?? silent,
  };
  const emit = eventEmitter({ onEvent: options.onEvent, log: settings.log });
  const authenticate = options.authenticate ?? basicAuthenticator(storeCredentialCheck(options.store, { scrypt }));
  const challenge = `Basic realm="${(options.realm ?? "registry-kit").replace(/["\\]/g, "")}"`;

  const fail = (code: UserErrorCode, message: string, field?: string) =>
    userErrorResponse(code, message, {
      ...(field !== undefined && { field }),
      ...(code === "UNAUTHORIZED" && { headers: { "www-authenticate": challenge } }),
    });

  return async (request: Request): Promise<Response> => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return fail("NOT_FOUND", "not found");
    }
    const route = matchRoute(url.pathname, settings.prefix);
    if (!route) return fail("NOT_FOUND", "not found");
    const allowed = ALLOWED_METHODS[route.kind];
    if (!allowed.includes(request.method)) {
      return methodNotAllowed(allowed, { errors: [{ code: "METHOD_NOT_ALLOWED", message: "method not allowed" }] });
    }
    try {
      const caller = await identify(request, authenticate, settings.store);
      if (caller === "rejected") return fail("UNAUTHORIZED", "invalid credentials");
      const response = await dispatch(route, { request, url, settings, caller });
      const action = response.ok ? changeAction(route, request.method) : undefined;
      if (action) {
        const target = { ...("id" in route && { user: String(route.id) }) };
        await emit(request, { action, target, ...(caller && { actor: caller.username }) });
      }
      return response;
    } catch (error) {
      if (error instanceof UserApiError) return fail(error.code, error.message, error.field);
      if (error instanceof UserStoreError) return fromStoreError(error, fail);
      if (error instanceof StorageError && error.code === "no_space") {
        // An operator must free space; the client learns that much and no more (no path, no driver message).
        settings.log({ level: "error", msg: "user store storage is full", route: route.kind, error: error.message });
        return fail("INSUFFICIENT_STORAGE", "the user store's storage is full: the change was not made");
      }
      settings.log({ level: "error", msg: "user service failure", route: route.kind, error: error instanceof Error ? error.message : String(error) });
      return fail("INTERNAL_ERROR", "internal error");
    }
  };
}

/**
 * The caller's current store record; `undefined` for an anonymous request (no
 * `Authorization` header); `"rejected"` when credentials were sent but not
 * accepted, or name a user the store does not hold (any route answers 401).
 */
async function identify(request: Request, authenticate: Authenticator, store: UserStore): Promise<UserRecord | undefined | "rejected"> {
  const principal: Principal | undefined = await authenticate(request);
  if (!principal) return request.headers.has("authorization") ? "rejected" : undefined;
  const record = principal.id !== undefined ? await store.getById(principal.id) : await store.getByUsername(principal.name);
  if (!record || record.username.toLowerCase() !== principal.name.toLowerCase()) return "rejected";
  return record;
}

function dispatch(route: UserRoute, ctx: RouteContext): Promise<Response> {
  const method = ctx.request.method;
  switch (route.kind) {
    case "users":
      return method === "GET" ? listUsers(ctx) : createUser(ctx);
    case "current":
      return getCurrentUser(ctx);
    case "user":
      return method === "GET" ? getUser(ctx, route.id) : method === "PUT" ? updateUser(ctx, route.id) : deleteUser(ctx, route.id);
    case "password":
      return changePassword(ctx, route.id);
    case "sysadmin":
      return setSysadmin(ctx, route.id);
  }
}

function fromStoreError(error: UserStoreError, fail: (code: UserErrorCode, message: string, field?: string) => Response): Response {
  switch (error.code) {
    case "duplicate_username":
      return fail("CONFLICT", "user name is taken", "username");
    case "duplicate_email":
      return fail("CONFLICT", "e-mail address is taken", "email");
    case "not_found":
      return fail("NOT_FOUND", "no such user");
    case "last_admin":
      return fail("CONFLICT", "the last administrator cannot be deleted or demoted");
    case "full":
      return fail("CONFLICT", "no user id is left");
  }
}

/** The event of a successful request that changed an account, if it did. */
function changeAction(route: UserRoute, method: string): EventAction | undefined {
  if (route.kind === "users" && method === "POST") return "user.created";
  if (route.kind === "user" && method === "PUT") return "user.updated";
  if (route.kind === "user" && method === "DELETE") return "user.deleted";
  if (route.kind === "password") return "user.password_changed";
  if (route.kind === "sysadmin") return "user.admin_changed";
  return undefined;
}
