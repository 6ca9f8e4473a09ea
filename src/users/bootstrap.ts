/**
 * Creating the first administrator from configuration.
 *
 * @module
 */
import { toPublicUser, type PublicUser } from "./record.js";
import { hashPassword, type ScryptParams } from "./password.js";
import { UserStoreError, type UserStore } from "./store.js";
import { passwordPolicy, validateEmail, validatePassword, validateUsername, type PasswordPolicy } from "./validation.js";
import { UserApiError } from "./errors.js";

/** The first administrator, from configuration. */
export interface BootstrapAdmin {
  /** User name of the administrator. */
  username: string;
  /** Initial password; must meet the password policy. */
  password: string;
  /** Optional; empty when absent. */
  email?: string;
  /** Display name. Default empty. */
  realname?: string;
  /** The scrypt cost (default `DEFAULT_SCRYPT`). */
  scrypt?: Partial<ScryptParams>;
  /** The password policy the password must meet (default `DEFAULT_PASSWORD_POLICY`). */
  passwordPolicy?: Partial<PasswordPolicy>;
}

/**
 * Create an administrator when the store holds no user at all; resolves to
 * the new user, or `undefined` when the store was not empty (nothing changes).
 * Throws a `RangeError` (naming the field, never the password) when the
 * configured user name, e-mail or password is invalid.
 */
export async function bootstrapAdmin(store: UserStore, admin: BootstrapAdmin): Promise<PublicUser | undefined> {
  let username: string;
  let email = "";
  try {
    username = validateUsername(admin.username);
    if (admin.email !== undefined && admin.email !== "") email = validateEmail(admin.email);
    validatePassword(admin.password, passwordPolicy(admin.passwordPolicy));
  } catch (error) {
    if (error instanceof UserApiError) throw new RangeError(`bootstrap administrator: ${error.message}`);
    throw error;
  }
  if ((await store.list({ limit: 0 })).total > 0) return undefined;
  const passwordHash = await hashPassword(admin.password, admin.scrypt);
  try {
    const record = await store.create({ username, email, realname: admin.realname ?? "", comment: "", sysadmin: true, passwordHash });
    return toPublicUser(record);
  } catch (error) {
    if (error instanceof UserStoreError && error.code === "duplicate_username") return undefined; // created concurrently
    throw error;
  }
}
