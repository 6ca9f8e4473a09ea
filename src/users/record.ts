/**
 * The user record: how the store keeps a user, and the public shape the
 * management API answers with. The password hash lives only in the stored
 * record; {@link toPublicUser} is the one way out of the store and drops it.
 *
 * @module
 */
import type { Principal } from "../auth/access.js";

/** A user as the {@link UserStore} keeps it. Never sent to a client as is. */
export interface UserRecord {
  /** Numeric id, assigned by the store on creation (1, 2, 3, …), never reused. */
  id: number;
  /**
   * A random identifier (a UUID) assigned by the store at creation, never
   * changed and never reused, unlike `id` and `username` also unique across
   * stores (a wiped and refilled store hands out the same ids and names again).
   * Refresh and management tokens carry it (`uid` claim), so a deleted user's
   * tokens never work for a new user of the same name. Records stored before
   * it existed get `legacyUid(id, createdAt)` on load.
   */
  uid: string;
  /**
   * Starts at 0; the store raises it with every password write and every
   * change of `sysadmin`. Refresh and management tokens carry it (`cred_ver`
   * claim) and are refused once it differs. Records stored before it existed
   * load with 0.
   */
  credentialVersion: number;
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

/**
 * The stable `uid` of a record stored before uids existed: derived from what
 * never changes in it (its id and creation time), so every load agrees
 * without a migration write, and a user created later, in this store or in a
 * wiped one, cannot have it (new users get random UUIDs).
 */
export function legacyUid(id: number, createdAt: string): string {
  return `legacy-${id}-${createdAt}`;
}

/**
 * The principal a stored user signs in as: name, role, id, and the `uid` and
 * `credentialVersion` the token service binds tokens to. A record from a
 * store that does not keep them (written for an older version of the
 * contract) gets {@link legacyUid} and 0, as stored legacy records do.
 */
export function toPrincipal(record: UserRecord): Principal {
  const uid = typeof record.uid === "string" && record.uid !== "" ? record.uid : legacyUid(record.id, record.createdAt);
  const credentialVersion = Number.isSafeInteger(record.credentialVersion) ? record.credentialVersion : 0;
  return { name: record.username, admin: record.sysadmin, id: record.id, uid, credentialVersion };
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
