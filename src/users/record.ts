/**
 * The user record: how the store keeps a user, and the public shape the
 * management API answers with. The password hash lives only in the stored
 * record; {@link toPublicUser} is the one way out of the store and drops it.
 *
 * @module
 */

/** A user as the {@link UserStore} keeps it. Never sent to a client as is. */
export interface UserRecord {
  /** Numeric id, assigned by the store on creation (1, 2, 3, …), never reused. */
  id: number;
  /** Login name as given at creation; unique case-insensitively; never changes. */
  username: string;
  /** E-mail address; unique case-insensitively when not empty. */
  email: string;
  /** Display name. */
  realname: string;
  /** Free text. */
  comment: string;
  /** System administrator. */
  sysadmin: boolean;
  /** Encoded password hash (`scrypt$N$r$p$salt$hash`, see `password.ts`). */
  passwordHash: string;
  /** Creation time, RFC 3339 (UTC). */
  createdAt: string;
  /** Time of the last change, RFC 3339 (UTC). */
  updatedAt: string;
}

/** The user record in API responses. It never holds a password, hash or salt. */
export interface PublicUser {
  /** The numeric id. */
  user_id: number;
  /** Lower-case user name; also the user's repository namespace. */
  username: string;
  /** E-mail address. */
  email: string;
  /** Display name. */
  realname: string;
  /** Free text. */
  comment: string;
  /** Whether the user is a system administrator. */
  sysadmin_flag: boolean;
  /** RFC 3339. */
  creation_time: string;
  /** RFC 3339. */
  update_time: string;
}

/** The response shape of a stored user: an explicit copy of the public fields only. */
export function toPublicUser(record: UserRecord): PublicUser {
  return {
    user_id: record.id,
    username: record.username,
    email: record.email,
    realname: record.realname,
    comment: record.comment,
    sysadmin_flag: record.sysadmin,
    creation_time: record.createdAt,
    update_time: record.updatedAt,
  };
}
