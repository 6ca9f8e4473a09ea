/**
 * Rules shared by the user store implementations: filtering, paging, patching
 * and the last-administrator check.
 *
 * @module
 */
import type { UserRecord } from "./record.js";
import { UserStoreError, fold, type NewUser, type UserPage, type UserPatch, type UserQuery } from "./store.js";

/** Whether a user matches the filter of a {@link UserQuery}. */
export function matches(user: UserRecord, query: UserQuery): boolean {
  if (query.username !== undefined && !fold(user.username).includes(fold(query.username))) return false;
  if (query.email !== undefined && !fold(user.email).includes(fold(query.email))) return false;
  return true;
}

/** Cut one page out of the (already filtered and ordered) matching users. */
export function pageOf(all: UserRecord[], query: UserQuery): UserPage {
  const offset = Math.max(0, Math.floor(query.offset ?? 0));
  const limit = query.limit === undefined ? Infinity : Math.max(0, Math.floor(query.limit));
  return { users: all.slice(offset, offset + limit), total: all.length };
}

/**
 * The record after a patch: only the fields present change, and `updatedAt`
 * moves. A password write (even of the same hash: a reset is a reset) or a
 * change of the administrator role raises `credentialVersion`, which refuses
 * the refresh and management tokens issued before.
 */
export function applyPatch(current: UserRecord, patch: UserPatch, time: string): UserRecord {
  const credentialsChange = patch.passwordHash !== undefined || (patch.sysadmin !== undefined && patch.sysadmin !== current.sysadmin);
  return {
    ...current,
    ...(credentialsChange && { credentialVersion: current.credentialVersion + 1 }),
    ...(patch.email !== undefined && { email: patch.email }),
    ...(patch.realname !== undefined && { realname: patch.realname }),
    ...(patch.comment !== undefined && { comment: patch.comment }),
    ...(patch.sysadmin !== undefined && { sysadmin: patch.sysadmin }),
    ...(patch.passwordHash !== undefined && { passwordHash: patch.passwordHash }),
    updatedAt: time,
  };
}

/** Throw `last_admin` when removing `user`'s administrator role would leave none. */
export function checkLastAdmin(user: UserRecord, removesRole: boolean, adminCount: number): void {
  if (removesRole && user.sysadmin && adminCount <= 1) {
    throw new UserStoreError("last_admin", "the last administrator cannot be removed or demoted");
  }
}

/**
 * The record of a new user: only the fields of {@link NewUser} (a caller's
 * extra properties are not stored), a fresh immutable `uid`, credential
 * version 0, and both times set to `time`.
 */
export function newRecord(user: NewUser, id: number, time: string): UserRecord {
  return {
    id,
    uid: crypto.randomUUID(),
    credentialVersion: 0,
    username: user.username,
    email: user.email,
    realname: user.realname,
    comment: user.comment,
    sysadmin: user.sysadmin,
    passwordHash: user.passwordHash,
    createdAt: time,
    updatedAt: time,
  };
}
