/**
 * The web page (`registry-kit/ui`) in the all-in-one server: signed in
 * against the user store, granting by the token service's policy, calling the
 * registry and the management API in process with short tokens signed by our
 * token service's key. Mounted when the server has users and its own token
 * service (the page needs both), at `registrykit.ui.prefix` (default `/ui`).
 *
 * @module
 */
import { createHmac, randomBytes } from "node:crypto";
import { bindingClaims, defaultPolicy, signJwt, type Access, type KeyProvider, type Principal } from "../../auth/index.js";
import { tagDetails } from "../../registry/index.js";
import type { StorageDriver } from "../../storage/driver.js";
import { createUi, storageEndedSessions } from "../../ui/index.js";
import { storeCredentialCheck, type ScryptParams, type UserStore } from "../../users/index.js";
import { managementAudience } from "./all-in-one-auth.js";
import { pathRoute, type Route } from "./all-in-one-routes.js";
import type { AllInOneConfig } from "../config/config-types.js";

/** What the page is built from. */
export interface UiParts {
  config: AllInOneConfig;
  storage: StorageDriver;
  users: UserStore;
  keys: KeyProvider;
  registry: (request: Request) => Promise<Response>;
  usersHandler: (request: Request) => Promise<Response>;
  /** The upload secret: the session key is derived from it, so no new file is needed. */
  uploadSecret: string;
  /** The scrypt cost of the unknown-user check (see `AllInOneOptions.scrypt`). */
  scrypt?: Partial<ScryptParams> | undefined;
}

/** Tokens live a minute and are reused for 45 s: a page of 50 tags signs once, not 50 times. */
const TOKEN_SECONDS = 60;
const REUSE_MS = 45_000;

/** The page's route. */
export function uiRoute(prefix: string, parts: UiParts): Route {
  const { config, users } = parts;
  const auth = config.auth!;
  const cache = new Map<string, { token: string; until: number }>();
  const token = async (principal: Principal | undefined, audience: "registry" | "management", access: Access[]): Promise<string> => {
    const key = JSON.stringify([principal?.name, principal?.uid, principal?.credentialVersion, audience, access]);
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.token;
    const now = Math.floor(Date.now() / 1000);
    const signed = await signJwt({
      iss: auth.issuer, sub: principal?.name ?? "registry-kit-ui",
      aud: audience === "registry" ? auth.service : managementAudience(auth.service),
      iat: now, nbf: now - 5, exp: now + TOKEN_SECONDS, jti: randomBytes(12).toString("base64url"), access,
      ...(principal ? bindingClaims(principal) : {}),
    }, await parts.keys.signingKey(), { x5c: false });
    if (cache.size > 1000) cache.clear();
    cache.set(key, { token: signed, until: Date.now() + REUSE_MS });
    return signed;
  };
  const check = storeCredentialCheck(users, parts.scrypt ? { scrypt: parts.scrypt } : {});
  const handler = createUi({
    prefix,
    registry: underHttpPrefix(parts.registry, config.http.prefix ?? ""),
    users: { handler: parts.usersHandler, path: `${config.users!.prefix}/users` },
    policy: defaultPolicy({ publicRepositories: config.tokenService?.publicRepositories ?? [] }),
    token,
    signIn: check,
    currentUser: check.lookupUser,
    tags: (name) => tagDetails(parts.storage, name, { limit: 500 }),
    tagDelete: config.deleteEnabled,
    sessionSecret: createHmac("sha256", parts.uploadSecret).update("registry-kit ui session v1").digest(),
    // In the registry's storage (`_ui/`), so a sign-out holds for every process serving it.
    endedSessions: storageEndedSessions(parts.storage),
    ...(config.http.publicUrl ? { registryHost: new URL(config.http.publicUrl).host } : {}),
  });
  return pathRoute(prefix, handler, true);
}

/**
 * The page calls the registry in process at `/v2/…`; with `http.prefix` the
 * registry answers under the prefix, so the call's path is moved there.
 */
function underHttpPrefix(registry: UiParts["registry"], prefix: string): UiParts["registry"] {
  if (prefix === "") return registry;
  return (request) => {
    const url = new URL(request.url);
    url.pathname = prefix + url.pathname;
    return registry(new Request(url, request));
  };
}
