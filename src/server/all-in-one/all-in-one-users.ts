/**
 * The management API in the all-in-one server: the first administrator of
 * an empty user store, and the `<prefix>/users` route, which accepts
 * `Authorization: Basic` and, with our own token service, its Bearer tokens
 * for the management audience.
 *
 * @module
 */
import type { EventHook } from "../../events/hook.js";
import { instrumentHandler } from "../../http/metrics.js";
import type { Metrics } from "../../util/metrics.js";
import { createTokenVerifier, type KeyProvider } from "../../auth/index.js";
import type { LogHook } from "../../http/log.js";
import {
  anyAuthenticator, basicAuthenticator, bearerAuthenticator, bootstrapAdmin, createUserService, storeCredentialCheck,
  type Authenticator, type ScryptParams, type UserStore,
} from "../../users/index.js";
import type { AllInOneInfo } from "./all-in-one-types.js";
import { pathRoute, type Route } from "./all-in-one-routes.js";
import type { UsersConfig } from "../config/config-types.js";
import { generatePassword } from "./key-material.js";

/** Create the first administrator when `users` is empty; the banner's `admin` entry, with the password only when generated. */
export async function bootstrapFirstAdmin(users: UserStore, config: UsersConfig, scrypt?: Partial<ScryptParams>): Promise<AllInOneInfo["admin"]> {
  const password = config.adminPassword ?? generatePassword();
  const created = await bootstrapAdmin(users, { username: config.adminUsername, password, ...(scrypt ? { scrypt } : {}) });
  return created ? { username: created.username, ...(config.adminPassword ? {} : { password }) } : undefined;
}

/** Who may send Bearer tokens to the management API: our token service's, for this audience. */
export interface ManagementBearer {
  /** The `aud` the tokens must carry. */
  audience: string;
  /** The `iss` the tokens must carry. */
  issuer: string;
  /** Our token service's keys. */
  keys: KeyProvider;
}

/** Who calls the management API: Basic against the store, and our token service's Bearer tokens when given. */
export function managementAuthenticator(users: UserStore, bearer: ManagementBearer | undefined, scrypt?: Partial<ScryptParams>): Authenticator {
  const basic = basicAuthenticator(storeCredentialCheck(users, scrypt ? { scrypt } : {}));
  if (!bearer) return basic;
  const verifier = createTokenVerifier({ issuer: bearer.issuer, audience: bearer.audience, keys: bearer.keys });
  return anyAuthenticator(basic, bearerAuthenticator(async (token) => (await verifier.verify(token)).claims, users));
}

/** The management API's route, `<prefix>/users` and everything under it. */
export function usersRoute(
  config: UsersConfig, users: UserStore, bearer: ManagementBearer | undefined, log: LogHook, metrics?: Metrics, onEvent?: EventHook, scrypt?: Partial<ScryptParams>,
): Route {
  const authenticate = bearer ? managementAuthenticator(users, bearer, scrypt) : undefined;
  const service = createUserService({
    store: users, prefix: config.prefix, selfRegistration: config.selfRegistration, authMode: "db", log,
    ...(authenticate ? { authenticate } : {}),
    ...(onEvent ? { onEvent } : {}),
    ...(scrypt ? { scrypt } : {}),
  });
  return pathRoute(`${config.prefix}/users`, metrics ? instrumentHandler(service, metrics, "users") : service, true);
}
