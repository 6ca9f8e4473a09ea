/**
 * Token auth in the all-in-one server: the signing keys of our own token
 * service (from the configured files, or generated in the key directory),
 * the registry's authorizer, and the token service's route. Our token
 * service also issues tokens for the management API, under the audience
 * {@link managementAudience}.
 *
 * @module
 */
import type { EventHook } from "../../events/hook.js";
import { instrumentHandler } from "../../http/metrics.js";
import type { Metrics } from "../../util/metrics.js";
import { readFile } from "node:fs/promises";
import {
  createBasicAuthorizer, createJwksHandler, createTokenAuthorizer, createTokenService, defaultPolicy, parseJwks, pemKeys,
  type Authorizer, type JwsAlgorithm, type KeyProvider,
} from "../../auth/index.js";
import { htpasswdCredentials } from "../../auth/basic/htpasswd.node.js";
import { pemKeysFromFiles } from "../../auth/keys/keys.node.js";
import type { LogHook } from "../../http/log.js";
import { storeCredentialCheck, type ScryptParams, type UserStore } from "../../users/index.js";
import type { AllInOneInfo } from "./all-in-one-types.js";
import { pathRoute, type Route } from "./all-in-one-routes.js";
import type { AllInOneConfig, TokenAuthConfig, TokenServiceConfig } from "../config/config-types.js";
import { KEY_FILES, loadOrCreateSigningKey } from "./key-material.js";

/**
 * The audience (`service` of the token request, `aud` of the token) of
 * tokens for the management API: the registry's service name + `-management`.
 * Our token service issues for it, the registry refuses such tokens (wrong
 * `aud`) and the management API refuses registry tokens.
 */
export function managementAudience(registryService: string): string {
  return `${registryService}-management`;
}

/** Our token service's keys, and what the banner says about them. */
export interface TokenKeys {
  /** Signs our tokens and verifies them. */
  keys: KeyProvider;
  /** The banner's `tokenService` entry. */
  info: NonNullable<AllInOneInfo["tokenService"]>;
}

/** Read the configured key and certificate, or read or create them in `keyDirectory`. */
export async function loadTokenKeys(own: TokenServiceConfig, keyDirectory: string): Promise<TokenKeys> {
  let keys: KeyProvider;
  let info: TokenKeys["info"];
  if (own.key && own.certificate) {
    keys = await pemKeysFromFiles({ privateKey: own.key, certificate: own.certificate });
    info = { path: own.path, kid: "", keyFile: own.key, keyCreated: false, certificateFile: own.certificate };
  } else {
    const pem = await loadOrCreateSigningKey(keyDirectory).catch((error: unknown) => {
      throw new Error(
        `cannot keep the token signing key in ${keyDirectory}: ${(error as Error).message}; set registrykit.tokenservice.key and ` +
          "registrykit.tokenservice.certificate to existing files, or registrykit.keydirectory (REGISTRY_KIT_DATA) to a writable directory",
        { cause: error },
      );
    });
    keys = pemKeys(pem.value);
    info = {
      path: own.path, kid: "", keyFile: pem.file, keyCreated: pem.created,
      certificateFile: pem.file.replace(KEY_FILES.privateKey, KEY_FILES.certificate),
    };
  }
  const signing = await keys.signingKey();
  info.kid = signing.kid ?? "";
  return { keys, info };
}

/**
 * The registry's authorizer: Basic auth against `config.htpasswd` (the file
 * re-read when it changes), or for `config.auth`, trusting the configured root
 * bundle or else our own keys; the realm defaults to our token service on
 * the public URL, the bound `origin`, or the listen address.
 */
export async function registryAuthorizer(
  config: AllInOneConfig,
  tokenKeys: KeyProvider | undefined,
  origin: string | undefined,
  log: LogHook,
): Promise<{ authorize?: Authorizer; info: AllInOneInfo["auth"] }> {
  if (config.htpasswd) {
    const { realm, path } = config.htpasswd;
    const authorize = createBasicAuthorizer({ realm, check: htpasswdCredentials({ path, log }), log });
    return { authorize, info: { mode: "htpasswd", realm, path } };
  }
  if (!config.auth) return { info: { mode: "none" } };
  const realm = config.auth.realm ?? `${config.http.publicUrl ?? origin ?? localOrigin(config)}${config.tokenService?.path ?? "/"}`;
  const { rootCertBundle: bundle, jwks, signingAlgorithms, autoRedirect, autoRedirectPath } = config.auth;
  const trust = bundle !== undefined || jwks !== undefined
    ? {
        ...(bundle !== undefined ? { rootCertBundle: await readFile(bundle, "utf8") } : {}),
        ...(jwks !== undefined ? { jwks: await readJwksFile(jwks, bundle !== undefined) } : {}),
      }
    : { keys: tokenKeys as KeyProvider };
  const authorize = createTokenAuthorizer({
    realm, service: config.auth.service, issuer: config.auth.issuer, ...trust, log,
    ...(signingAlgorithms ? { algorithms: signingAlgorithms as JwsAlgorithm[] } : {}),
    ...(autoRedirect ? { autoRedirect: { ...(autoRedirectPath !== undefined ? { path: autoRedirectPath } : {}) } } : {}),
  });
  return {
    authorize,
    info: {
      mode: "token", realm, service: config.auth.service, issuer: config.auth.issuer, external: !config.tokenService,
      ...(bundle !== undefined ? { rootCertBundle: bundle } : {}),
      ...(jwks !== undefined ? { jwks } : {}),
    },
  };
}

/**
 * Our token service at `own.path`: it checks passwords against the user
 * store (when there is one) and also issues for `managementAudience`, when set.
 */
export function tokenServiceRoute(
  own: TokenServiceConfig,
  auth: TokenAuthConfig,
  keys: KeyProvider,
  users: UserStore | undefined,
  managementAudience: string | undefined,
  log: LogHook,
  metrics?: Metrics,
  onEvent?: EventHook,
  scrypt?: Partial<ScryptParams>,
): Route {
  const tokenService = createTokenService({
    issuer: auth.issuer,
    // The first is the default for requests without `service`.
    service: managementAudience ? [auth.service, managementAudience] : auth.service,
    keys,
    ...(users ? { checkCredentials: storeCredentialCheck(users, scrypt ? { scrypt } : {}) } : {}),
    policy: defaultPolicy({ publicRepositories: own.publicRepositories }),
    expiresIn: own.expiration,
    ...(own.x5c === false ? { x5c: false } : {}),
    log,
    ...(metrics ? { metrics } : {}),
    ...(onEvent ? { onEvent } : {}),
  });
  return pathRoute(own.path, metrics ? instrumentHandler(tokenService, metrics, "token") : tokenService, false);
}

/** The largest JWKS file read (a JWKS of 256 RSA-4096 keys is about 200 KiB). */
const MAX_JWKS_FILE = 1024 * 1024;

/**
 * Read and check `auth.token.jwks` at start-up, so a bad file stops the
 * server with the file's name and the reason rather than failing each token.
 */
async function readJwksFile(path: string, withBundle: boolean): Promise<string> {
  const text = await readFile(path, "utf8").catch((e: NodeJS.ErrnoException) => {
    throw new Error(`auth.token.jwks: cannot read ${path}: ${e.code ?? e.message}`);
  });
  if (text.length > MAX_JWKS_FILE) throw new Error(`auth.token.jwks: ${path} is larger than 1 MiB`);
  const keys = await parseJwks(text).catch((e: Error) => {
    throw new Error(`auth.token.jwks: ${path}: ${e.message}`);
  });
  if (keys.length === 0 && !withBundle) throw new Error(`auth.token.jwks: ${path} holds no signing key (and there is no rootcertbundle)`);
  return text;
}

/** Where our token service publishes its verification keys as a JWKS (under `http.prefix`, when set). */
export const JWKS_PATH = "/.well-known/jwks.json";

/**
 * `GET <prefix>/.well-known/jwks.json`: our token service's public keys as a
 * JWKS, each with the `kid` its tokens carry, for Distribution 3's
 * `auth.token.jwks` or any JWKS consumer.
 */
export function jwksRoute(keys: KeyProvider, prefix = ""): Route {
  return pathRoute(prefix + JWKS_PATH, createJwksHandler(keys), false);
}

function localOrigin(config: AllInOneConfig): string {
  const host = config.http.host === "0.0.0.0" ? "127.0.0.1" : config.http.host === "::" ? "[::1]" : config.http.host;
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${config.http.port}`;
}
