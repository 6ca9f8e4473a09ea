/**
 * The `auth` section: `auth.token`, how the registry checks Bearer tokens
 * (with registry-kit's own token service every key has a default; with an
 * external one all four are required, as in Distribution), or
 * `auth.htpasswd`, Basic auth against an htpasswd file. As in Distribution,
 * only one of them.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import type { HtpasswdAuthConfig, TokenAuthConfig, TokenServiceConfig } from "./config-types.js";
import { isJwsAlgorithm } from "../../auth/jwt/algorithms.js";
import { DEFAULT_AUTO_REDIRECT_PATH } from "../../auth/index.js";
import { bool, ConfigError, httpUrl, str, stringList } from "./config-values.js";

/** The default token service name (`auth.token.service` and `issuer`). */
export const DEFAULT_SERVICE = "registry-kit";

/**
 * `auth.htpasswd` (`realm` and `path`, both required, as in Distribution), or
 * `undefined` without it. Refused together with `auth.token`: Distribution
 * runs one access controller (`resolveConfig` also refuses it with an enabled
 * `registrykit.tokenservice`).
 */
export function resolveHtpasswd({ get, opt, named, abs }: ConfigReader): HtpasswdAuthConfig | undefined {
  if (get("auth.htpasswd") === undefined) return undefined;
  if (get("auth.token") !== undefined) {
    throw new ConfigError(named("auth.htpasswd"),
      "cannot be used together with auth.token: Distribution allows one access controller; keep one of them");
  }
  const realm = opt("auth.htpasswd.realm", str);
  if (realm === undefined) throw new ConfigError(named("auth.htpasswd.realm"), "is required");
  const file = opt("auth.htpasswd.path", str);
  if (file === undefined) throw new ConfigError(named("auth.htpasswd.path"), "is required (an htpasswd file of bcrypt hashes, as `htpasswd -B` writes)");
  return { realm, path: abs(file) };
}

/** The `auth.token` keys that are set; `undefined` without an `auth.token` section. */
export function resolveAuth({ doc, get, opt, abs, named }: ConfigReader): Partial<TokenAuthConfig> | undefined {
  if (doc.auth === undefined || doc.auth === null) return undefined;
  if (get("auth.token") === undefined) return undefined;
  const bundle = opt("auth.token.rootcertbundle", str);
  const jwks = opt("auth.token.jwks", str);
  const algorithms = opt("auth.token.signingalgorithms", stringList);
  const autoRedirect = opt("auth.token.autoredirect", bool);
  const autoRedirectPath = opt("auth.token.autoredirectpath", str);
  if (algorithms !== undefined) checkAlgorithms(algorithms, named("auth.token.signingalgorithms"));
  if (autoRedirectPath !== undefined && !/^\/[^\s"\\?#]*$/.test(autoRedirectPath)) {
    throw new ConfigError(named("auth.token.autoredirectpath"), `must be an absolute path without spaces, quotes, ? or #: ${JSON.stringify(autoRedirectPath)}`);
  }
  return {
    ...(get("auth.token.realm") !== undefined ? { realm: opt("auth.token.realm", httpUrl) } : {}),
    ...(get("auth.token.service") !== undefined ? { service: opt("auth.token.service", str) } : {}),
    ...(get("auth.token.issuer") !== undefined ? { issuer: opt("auth.token.issuer", str) } : {}),
    ...(bundle !== undefined ? { rootCertBundle: abs(bundle) } : {}),
    ...(jwks !== undefined ? { jwks: abs(jwks) } : {}),
    ...(algorithms !== undefined && algorithms.length > 0 ? { signingAlgorithms: algorithms } : {}),
    ...(autoRedirect ? { autoRedirect } : {}),
    // Distribution reads the path only when autoredirect is on.
    ...(autoRedirect && autoRedirectPath !== undefined ? { autoRedirectPath } : {}),
  };
}

/**
 * `signingalgorithms`: names Distribution 3 knows; the HMAC ones need a
 * shared secret, which `auth.token` cannot configure, so they are refused
 * with that reason rather than accepted and never matched.
 */
function checkAlgorithms(algorithms: string[], key: string): void {
  for (const alg of algorithms) {
    if (/^HS(256|384|512)$/.test(alg)) throw new ConfigError(key, `${alg} needs a shared secret, which auth.token cannot configure; list asymmetric algorithms`);
    if (!isJwsAlgorithm(alg)) {
      throw new ConfigError(key, `unsupported signing algorithm ${JSON.stringify(alg)} (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA)`);
    }
  }
}

/**
 * With our own token service every `auth.token` key has a default. Without
 * it (an external token service) all four are required, as in Distribution.
 */
export function completeAuth(
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
      ...(auth?.jwks !== undefined ? { jwks: auth.jwks } : {}),
      ...(auth?.signingAlgorithms !== undefined ? { signingAlgorithms: auth.signingAlgorithms } : {}),
      ...(auth?.autoRedirect ? { autoRedirect: true, autoRedirectPath: auth.autoRedirectPath ?? tokenService.path } : {}),
    };
  }
  if (!auth) return undefined;
  for (const key of ["realm", "service", "issuer"] as const) {
    if (auth[key] === undefined) {
      throw new ConfigError(named(`auth.token.${key}`),
        "is required for an external token service (or enable registry-kit's own with a registrykit.tokenservice section)");
    }
  }
  if (auth.rootCertBundle === undefined && auth.jwks === undefined) {
    throw new ConfigError(named("auth.token.rootcertbundle"),
      "or auth.token.jwks is required for an external token service (or enable registry-kit's own with a registrykit.tokenservice section)");
  }
  if (auth.autoRedirect) auth.autoRedirectPath ??= DEFAULT_AUTO_REDIRECT_PATH;
  return auth as TokenAuthConfig;
}
