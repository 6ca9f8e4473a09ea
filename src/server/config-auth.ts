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
import { ConfigError, httpUrl, str } from "./config-values.js";

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
export function resolveAuth({ doc, get, opt, abs }: ConfigReader): Partial<TokenAuthConfig> | undefined {
  if (doc.auth === undefined || doc.auth === null) return undefined;
  if (get("auth.token") === undefined) return undefined;
  const bundle = opt("auth.token.rootcertbundle", str);
  return {
    ...(get("auth.token.realm") !== undefined ? { realm: opt("auth.token.realm", httpUrl) } : {}),
    ...(get("auth.token.service") !== undefined ? { service: opt("auth.token.service", str) } : {}),
    ...(get("auth.token.issuer") !== undefined ? { issuer: opt("auth.token.issuer", str) } : {}),
    ...(bundle !== undefined ? { rootCertBundle: abs(bundle) } : {}),
  };
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
    };
  }
  if (!auth) return undefined;
  for (const key of ["realm", "service", "issuer", "rootcertbundle"] as const) {
    const value = key === "rootcertbundle" ? auth.rootCertBundle : auth[key];
    if (value === undefined) {
      throw new ConfigError(named(`auth.token.${key}`),
        "is required for an external token service (or enable registry-kit's own with a registrykit.tokenservice section)");
    }
  }
  return auth as TokenAuthConfig;
}
