/**
 * Token binding: the claims that tie a refresh or management token to the
 * exact credentials it was issued for, not merely to a user name. A token
 * carries the principal's immutable `uid` and its `cred_ver` (credential
 * version); whoever accepts it later compares them with the user's current
 * values, so a password change, a reset, a role change, or a new user under
 * a deleted user's name refuses every token issued before.
 *
 * @module
 */
import type { Principal } from "./access.js";

/** The binding claims of a token. */
export interface BindingClaims {
  /** The user's immutable identifier (`Principal.uid`). */
  uid?: string;
  /** The user's credential version (`Principal.credentialVersion`, 0 when the principal has a `uid` but no version). */
  cred_ver?: number;
}

/**
 * The claims binding a token to `principal`: `{ uid, cred_ver }` when it has a
 * `uid`, else none (a credential check that knows no uid binds by name only).
 */
export function bindingClaims(principal: Principal): BindingClaims {
  return principal.uid === undefined ? {} : { uid: principal.uid, cred_ver: principal.credentialVersion ?? 0 };
}

/**
 * Whether a token's claims carry exactly `principal`'s current binding. A
 * token without binding claims matches only a principal without a `uid`, so
 * tokens issued before binding existed are refused for store users.
 */
export function matchesBinding(claims: { readonly [claim: string]: unknown }, principal: Principal): boolean {
  const want = bindingClaims(principal);
  return claims.uid === want.uid && claims.cred_ver === want.cred_ver;
}
