/**
 * The credential check of the token service, backed by the user store: the
 * same users sign in with `skopeo`/`podman` and manage themselves under
 * `/api/users`.
 *
 * @module
 */
import type { CredentialCheck, Principal } from "../auth/access.js";
import { spendDummy, verifyPassword, type ScryptParams } from "./password.js";
import { toPrincipal } from "./record.js";
import type { UserStore } from "./store.js";

/** Options for {@link storeCredentialCheck}. */
export interface StoreCredentialCheckOptions {
  /**
   * The scrypt parameters of the dummy check spent on unknown users; use the
   * same value as the user service's `scrypt` option. Default `DEFAULT_SCRYPT`.
   */
  scrypt?: Partial<ScryptParams>;
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
  lookupUser(name: string): Promise<Principal | undefined>;
}

/**
 * A {@link CredentialCheck} against a user store. Administrators
 * (`sysadmin`) become `Principal.admin`. Nothing is cached: every call reads
 * the store, so a revoked role, a changed password or a deleted user takes
 * effect on the next token request. An unknown user costs one scrypt, like a
 * known one. Store failures are thrown (they are not wrong credentials).
 */
export function storeCredentialCheck(store: UserStore, options: StoreCredentialCheckOptions = {}): StoreCredentialCheck {
  const dummy = options.scrypt ?? {};
  const check = async (username: string, password: string): Promise<Principal | undefined> => {
    const user = username.length > 0 && username.length <= 255 ? await store.getByUsername(username) : undefined;
    if (!user) {
      await spendDummy(password, dummy);
      return undefined;
    }
    if (!(await verifyPassword(password, user.passwordHash, dummy))) return undefined;
    return toPrincipal(user);
  };
  const lookupUser = async (name: string): Promise<Principal | undefined> => {
    const user = name.length > 0 && name.length <= 255 ? await store.getByUsername(name) : undefined;
    return user && toPrincipal(user);
  };
  return Object.assign(check, { lookupUser });
}
