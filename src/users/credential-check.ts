/**
 * The credential check of the token service, backed by the user store: the
 * same users sign in with `skopeo`/`podman` and manage themselves under
 * `/api/users`.
 *
 * @module
 */
import type { CredentialCheck, Principal } from "../auth/access.js";
import { dummyHash, verifyPassword, type ScryptParams } from "./password.js";
import { toPrincipal } from "./record.js";
import type { UserStore } from "./store.js";

/** Options for {@link storeCredentialCheck}. */
export interface StoreCredentialCheckOptions {
  /**
   * The scrypt parameters of the dummy hash verified for unknown users; use
   * the same value as the user service's `scrypt` option (the parameters of
   * your users' hashes). Default `DEFAULT_SCRYPT`.
   */
  scrypt?: Partial<ScryptParams>;
  /**
   * Checks a password against an encoded hash; called exactly once per
   * credential check, with the user's hash or, for an unknown user, the dummy
   * hash. Default: `verifyPassword` (with `scrypt` for malformed hashes). Pass
   * your own to use another implementation of the same hash format, or to
   * count verifications in tests.
   */
  verifyPassword?: (password: string, encoded: string) => Promise<boolean>;
}

/**
 * A {@link CredentialCheck} that can also look a user up by name, without a
 * password: the token service uses {@link StoreCredentialCheck.lookupUser} to
 * re-check refresh tokens. Principals carry the record's `uid` and
 * `credentialVersion`, so a refresh token stops working once its user is
 * deleted (even when a new user takes the name), changes or is given a new
 * password, or gains or loses the administrator role.
 */
export interface StoreCredentialCheck extends CredentialCheck {
  /** The principal of the user named `name` as the store holds it now, or `undefined` when there is none; no password is checked. */
  lookupUser(name: string): Promise<Principal | undefined>;
}

/**
 * A {@link CredentialCheck} against a user store. Administrators
 * (`sysadmin`) become `Principal.admin`. Nothing is cached: every call reads
 * the store, so a revoked role, a changed password or a deleted user takes
 * effect on the next token request. Store failures are thrown (they are not
 * wrong credentials).
 *
 * An unknown user costs what a known user with a wrong password costs, so the
 * answer's timing does not reveal which names exist: one name lookup in the
 * store (stores make a miss cost what a hit costs, see `UserStore`), then one
 * full verification, against a dummy hash with the `scrypt` parameters when
 * the user is unknown. A name longer than 255 characters, which no user can
 * have, skips the store.
 */
export function storeCredentialCheck(store: UserStore, options: StoreCredentialCheckOptions = {}): StoreCredentialCheck {
  const params = options.scrypt ?? {};
  const verify = options.verifyPassword ?? ((password: string, encoded: string) => verifyPassword(password, encoded, params));
  const unknownUserHash = dummyHash(params);
  const check = async (username: string, password: string): Promise<Principal | undefined> => {
    const user = username.length > 0 && username.length <= 255 ? await store.getByUsername(username) : undefined;
    const matches = await verify(password, user?.passwordHash ?? unknownUserHash);
    return user && matches ? toPrincipal(user) : undefined;
  };
  const lookupUser = async (name: string): Promise<Principal | undefined> => {
    const user = name.length > 0 && name.length <= 255 ? await store.getByUsername(name) : undefined;
    return user && toPrincipal(user);
  };
  return Object.assign(check, { lookupUser });
}
