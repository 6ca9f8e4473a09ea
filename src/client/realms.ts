/**
 * Which token realms an upstream's credentials may go to. A registry names
 * its token realm in its `401` challenge, on any host it likes: a proxy that
 * sent its configured password wherever the first challenge pointed would
 * hand it to whoever answers for the upstream (or a redirect, or a
 * compromised mirror). So the password goes only to realms on the upstream's
 * own origin and to those configured for it (Docker Hub's
 * `https://auth.docker.io/token` for `https://registry-1.docker.io`).
 *
 * @module
 */
import type { LogHook } from "../http/log.js";

/** A configured realm: its origin, and its path (a path ending in `/` covers everything under it). */
interface TrustedRealm {
  origin: string;
  path: string;
}

/** Parse the configured `realms` (throws `TypeError` on one that is not an absolute http(s) URL). */
export function trustedRealms(realms: readonly string[]): TrustedRealm[] {
  return realms.map((text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new TypeError(`upstream realm ${JSON.stringify(text)} is not an absolute URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`upstream realm ${JSON.stringify(text)} must be http: or https:`);
    return { origin: url.origin, path: url.pathname };
  });
}

/**
 * The `realmAllowed` of the upstream's transport: a realm on `base`'s origin,
 * or one of `trusted`. A refused realm is logged once (it gets an anonymous
 * token request instead; the upstream then answers as it does to anyone).
 */
export function realmPolicy(base: URL, trusted: readonly TrustedRealm[], log: LogHook): (realm: string) => boolean {
  const refused = new Set<string>();
  return (realm) => {
    let url: URL | undefined;
    try {
      url = new URL(realm);
    } catch {
      url = undefined;
    }
    if (url && (url.origin === base.origin || trusted.some((t) => covers(t, url)))) return true;
    if (!refused.has(realm)) {
      refused.add(realm);
      log({
        level: "warn",
        msg: "pull-through: credentials withheld from a token realm not on the upstream's origin nor in its realms",
        upstream: base.origin,
        realm: url ? `${url.origin}${url.pathname}` : realm,
      });
    }
    return false;
  };
}

function covers(trusted: TrustedRealm, url: URL): boolean {
  if (trusted.origin !== url.origin) return false;
  return trusted.path.endsWith("/") ? url.pathname.startsWith(trusted.path) : url.pathname === trusted.path;
}
