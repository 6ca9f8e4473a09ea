/**
 * Account administration without the HTTP API, straight on a user store:
 * what the `registry-kit users` command does, offline or beside a running
 * server on the same store (the server reads every record afresh), so a lost
 * administrator password can be reset. The same rules as the API: user names
 * and e-mail addresses validated, passwords checked against the password
 * policy and hashed, the last administrator never deleted nor demoted.
 *
 * @module
 */
import { toPublicUser, type PublicUser, type UserRecord } from "./record.js";
import { hashPassword, type ScryptParams } from "./password.js";
import { UserStoreError, type UserStore } from "./store.js";
import { passwordPolicy, validateEmail, validatePassword, validateUsername, type PasswordPolicy } from "./validation.js";
import { UserApiError } from "./errors.js";

/** Password rules and hashing cost of the account commands. */
export interface AccountOptions {
  /** The policy new passwords must meet (default `DEFAULT_PASSWORD_POLICY`). */
  passwordPolicy?: Partial<PasswordPolicy>;
  /** The scrypt cost of new hashes (default `DEFAULT_SCRYPT`). */
  scrypt?: Partial<ScryptParams>;
}

/** A new account for {@link createAccount}. */
export interface NewAccount {
  /** User name (folded to lower case). */
  username: string;
  /** Its password. */
  password: string;
  /** E-mail address; none by default. */
  email?: string;
  /** Whether it is an administrator. Default false. */
  admin?: boolean;
}

/** Run a validation, turning its refusal into a `RangeError` naming the field (never the value). */
function valid<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof UserApiError) throw new RangeError(error.message);
    throw error;
  }
}

async function existing(store: UserStore, username: string): Promise<UserRecord> {
  const record = await store.getByUsername(username);
  if (!record) throw new UserStoreError("not_found", `no user named ${username}`);
  return record;
}

/**
 * Add an account. Throws `RangeError` for an invalid name, e-mail or password
 * and `UserStoreError` (`duplicate_username`, `duplicate_email`) from the store.
 */
export async function createAccount(store: UserStore, account: NewAccount, options: AccountOptions = {}): Promise<PublicUser> {
  const username = valid(() => validateUsername(account.username));
  const email = account.email ? valid(() => validateEmail(account.email)) : "";
  valid(() => validatePassword(account.password, passwordPolicy(options.passwordPolicy)));
  const passwordHash = await hashPassword(account.password, options.scrypt);
  return toPublicUser(await store.create({ username, email, realname: "", comment: "", sysadmin: account.admin ?? false, passwordHash }));
}

/**
 * Set the password of `username` (an administrator's too, without the old
 * one). Tokens issued before stop working. Throws `RangeError` for a password
 * the policy refuses, `UserStoreError` `not_found`.
 */
export async function resetPassword(store: UserStore, username: string, password: string, options: AccountOptions = {}): Promise<PublicUser> {
  valid(() => validatePassword(password, passwordPolicy(options.passwordPolicy)));
  const record = await existing(store, username);
  return toPublicUser(await store.update(record.id, { passwordHash: await hashPassword(password, options.scrypt) }));
}

/** Grant (`true`) or revoke the administrator role. Throws `UserStoreError` `not_found` or `last_admin`. */
export async function setAdministrator(store: UserStore, username: string, admin: boolean): Promise<PublicUser> {
  const record = await existing(store, username);
  return toPublicUser(await store.update(record.id, { sysadmin: admin }));
}

/** Delete an account. Throws `UserStoreError` `not_found` or `last_admin`. */
export async function deleteAccount(store: UserStore, username: string): Promise<void> {
  await store.delete((await existing(store, username)).id);
}

/** Every account, in id order. */
export async function listAccounts(store: UserStore): Promise<PublicUser[]> {
  return (await store.list()).users.map(toPublicUser);
}
