/**
 * Who is calling the management service. An {@link Authenticator} reads the
 * request and resolves to the caller, or `undefined` (no or unacceptable
 * credentials). The service then looks the caller up in the user store, so
 * the store's current record (role, existence) always decides.
 *
 * @module
 */
import type { CredentialCheck, Principal } from "../auth/access.js";
import { matchesBinding } from "../auth/binding.js";
import { toPrincipal } from "./record.js";
import type { UserStore } from "./store.js";

/** Resolves the caller of a request, or `undefined`. Must not throw for bad credentials. */
export type Authenticator = (request: Request) => Promise<Principal | undefined>;

/**
 * Verifies a bearer token (signature, issuer, audience = the management
 * service, expiry) and resolves to its claims (`VerifiedToken.claims` of
 * registry-kit's verifier), or `undefined`.
 */
export type BearerVerifier = (token: string) => Promise<{
  /** The token's subject: the user name. */
  sub?: unknown;
  /** The user's `uid` the token was issued for (see `bindingClaims`). */
  uid?: unknown;
  /** The user's credential version the token was issued for. */
  cred_ver?: unknown;
} | undefined>;

/**
 * `Authorization: Basic <base64(user:password)>` checked with a credential
 * check (the default of `createUserService` is
 * `basicAuthenticator(storeCredentialCheck(store))`). Any other scheme or a
 * malformed header resolves to `undefined`.
 */
export function basicAuthenticator(check: CredentialCheck): Authenticator {
  return async (request) => {
    const credentials = parseBasic(request.headers.get("authorization"));
    return credentials && check(credentials.username, credentials.password);
  };
}

/**
 * `Authorization: Bearer <token>`: `verify` checks the token (it must only
 * accept tokens whose audience is the management service), the token's `sub`
 * is looked up in the store, and the token is accepted only while its `uid`
 * and `cred_ver` claims equal the record's `uid` and `credentialVersion`
 * (registry-kit's token service puts them in every token it issues to a store
 * user). So a deleted user, a new user under a deleted user's name, a
 * password change or reset, and a change of the administrator role each
 * refuse the tokens issued before; tokens without these claims are refused.
 */
export function bearerAuthenticator(verify: BearerVerifier, store: UserStore): Authenticator {
  return async (request) => {
    const header = request.headers.get("authorization") ?? "";
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
    if (!match?.[1]) return undefined;
    const claims = await verify(match[1]).catch(() => undefined);
    if (!claims || typeof claims.sub !== "string" || claims.sub === "") return undefined;
    const user = await store.getByUsername(claims.sub);
    if (!user) return undefined;
    const principal = toPrincipal(user);
    return matchesBinding(claims, principal) ? principal : undefined;
  };
}

/** Try authenticators in order; the first that knows the caller wins. */
export function anyAuthenticator(...authenticators: Authenticator[]): Authenticator {
  return async (request) => {
    for (const authenticate of authenticators) {
      const principal = await authenticate(request);
      if (principal) return principal;
    }
    return undefined;
  };
}

/** Decode a Basic credential; `undefined` when the header is absent, another scheme or malformed. */
export function parseBasic(header: string | null): { username: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header ?? "");
  if (!match?.[1] || match[1].length > 4096) return undefined;
  let text: string;
  try {
    const binary = atob(match[1]);
    text = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
  const colon = text.indexOf(":");
  if (colon < 0) return undefined;
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}
