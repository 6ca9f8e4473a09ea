/**
 * The user store contract: the few operations the management API and the
 * token service's credential check need. Implementations: `memoryUserStore()`
 * (tests, throw-away servers) and `storageUserStore(driver)` (persists on a
 * storage driver). Every implementation must pass `describeUserStoreContract`.
 *
 * Rules every store keeps:
 * - Ids are positive integers, assigned in increasing order, never reused, and
 *   at most {@link MAX_USER_ID}.
 * - User names are unique case-insensitively; e-mail addresses too, except the
 *   empty string (no address), which any number of users may have.
 * - The user name of a record never changes, nor its `uid`: a random UUID
 *   given at creation, unique across stores too.
 * - `credentialVersion` starts at 0 and rises with every `update` that writes
 *   `passwordHash` or changes `sysadmin`, and with no other (tokens bound to it
 *   are refused once it changes).
 * - Once a store holds an administrator, no `update` or `delete` may leave it
 *   without one: such a call fails with `last_admin` and changes nothing.
 * - Each mutation is atomic with respect to the others in the same process:
 *   uniqueness checks, id allocation and the last-administrator rule cannot race.
 * - Stores validate nothing else: field syntax is the caller's business
 *   (see `validation.ts`).
 *
 * @module
 */
import type { UserRecord } from "./record.js";

/** The largest user id (2^31 - 1); ids above it are never assigned nor routed. */
export const MAX_USER_ID = 2_147_483_647;

/** The fields of a new user. The store assigns `id`, `uid`, `credentialVersion` (0), `createdAt` and `updatedAt`. */
export interface NewUser {
  /** Lower-case, validated user name. */
  username: string;
  /** Validated e-mail address. */
  email: string;
  /** Display name. */
  realname: string;
  /** Free text. */
  comment: string;
  /** Whether the user is a system administrator. */
  sysadmin: boolean;
  /** The scrypt hash (see `hashPassword`). */
  passwordHash: string;
}

/** A change to a user: only the fields present are changed. */
export interface UserPatch {
  /** New e-mail address. */
  email?: string;
  /** New display name. */
  realname?: string;
  /** New comment. */
  comment?: string;
  /** Grant or revoke the administrator role. */
  sysadmin?: boolean;
  /** New password hash. */
  passwordHash?: string;
}

/** Filter and page for {@link UserStore.list}. */
export interface UserQuery {
  /** Only users whose name contains this text (case-insensitive). */
  username?: string;
  /** Only users whose e-mail contains this text (case-insensitive). */
  email?: string;
  /** Skip this many matching users (default 0). */
  offset?: number;
  /** At most this many users (default: all). `0` only counts. */
  limit?: number;
}

/** One page of {@link UserStore.list}. */
export interface UserPage {
  /** The page, in increasing id order. */
  users: UserRecord[];
  /** How many users match the filter in all. */
  total: number;
}

/**
 * Machine-readable reasons a store refuses a change.
 *
 * - `duplicate_username`: another user has this username.
 * - `duplicate_email`: another user has this email address.
 * - `not_found`: no user has this id.
 * - `last_admin`: the change would remove or demote the last administrator.
 * - `full`: no user id is left (`MAX_USER_ID` reached).
 */
export type UserStoreErrorCode = "duplicate_username" | "duplicate_email" | "not_found" | "last_admin" | "full";

/** The one error type stores throw for refused changes. Messages never hold secrets. */
export class UserStoreError extends Error {
  /** Always `"UserStoreError"`. */
  override readonly name = "UserStoreError";
  constructor(
    /** Why the change was refused. */
    readonly code: UserStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Where users live. See the module comment for the rules every store keeps. */
export interface UserStore {
  /** The user with this id, or `undefined`. */
  getById(id: number): Promise<UserRecord | undefined>;
  /**
   * The user with this name, compared case-insensitively, or `undefined`.
   * Sign-in looks users up with it, so a name nobody has should cost what an
   * existing one costs (the storage store reads another user's index entry
   * and record on a miss); otherwise the time of a refused sign-in tells
   * whether the name exists.
   */
  getByUsername(username: string): Promise<UserRecord | undefined>;
  /** The user with this e-mail, compared case-insensitively, or `undefined` (always for `""`). */
  getByEmail(email: string): Promise<UserRecord | undefined>;
  /** Users matching the filter, in increasing id order, one page, with the total. */
  list(query?: UserQuery): Promise<UserPage>;
  /**
   * Add a user; resolves to the stored record with its new id.
   * Throws `duplicate_username`, `duplicate_email`, or `full` when no id is left.
   */
  create(user: NewUser): Promise<UserRecord>;
  /**
   * Change a user; bumps `updatedAt` (and `credentialVersion` for a password
   * write or a role change); resolves to the new record.
   * Throws `not_found`, `duplicate_email`, or `last_admin` (demoting the last administrator).
   */
  update(id: number, patch: UserPatch): Promise<UserRecord>;
  /** Remove a user. Throws `not_found`, or `last_admin` (deleting the last administrator). */
  delete(id: number): Promise<void>;
  /** How many administrators there are. */
  countAdmins(): Promise<number>;
}

/** Case-folding used for every case-insensitive comparison of names and e-mails. */
export function fold(text: string): string {
  return text.toLowerCase();
}
