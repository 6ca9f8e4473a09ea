/**
 * The `auth.token` section: how the registry checks Bearer tokens. With
 * registry-kit's own token service every key has a default; with an external
 * one all four are required, as in Distribution.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import type { TokenAuthConfig, TokenServiceConfig } from "./config-types.js";
import { ConfigError, httpUrl, str } from "./config-values.js";

/** The default token service name (`auth.token.service` and `issuer`). */
export const DEFAULT_SERVICE = "registry-kit";

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
