/**
 * An in-memory {@link UserStore}: for tests, examples and throw-away servers.
 * Every call to {@link memoryUserStore} makes an independent, empty store.
 *
 * @module
 */
import type { UserRecord } from "./record.js";
import { MAX_USER_ID, UserStoreError, fold, type NewUser, type UserPatch, type UserQuery, type UserPage, type UserStore } from "./store.js";
import { applyPatch, checkLastAdmin, matches, newRecord, pageOf } from "./store-rules.js";

/** Options for {@link memoryUserStore}. */
export interface MemoryUserStoreOptions {
  /** Clock for `createdAt`/`updatedAt` (tests). Default: `() => new Date()`. */
  now?: () => Date;
}

/** Create an empty in-memory user store. */
export function memoryUserStore(options: MemoryUserStoreOptions = {}): UserStore {
  const now = options.now ?? (() => new Date());
  const users = new Map<number, UserRecord>();
  let nextId = 1;

  // Every method body runs without awaiting, so each mutation is atomic in-process.
  const find = (predicate: (user: UserRecord) => boolean): UserRecord | undefined => {
    for (const user of users.values()) if (predicate(user)) return user;
    return undefined;
  };
  // Every user is compared, found or not, so a miss costs what a hit costs (sign-in timing).
  const byName = (username: string): UserRecord | undefined => {
    let match: UserRecord | undefined;
    for (const user of users.values()) if (fold(user.username) === fold(username)) match = user;
    return match;
  };
  const byEmail = (email: string) => (email === "" ? undefined : find((u) => u.email !== "" && fold(u.email) === fold(email)));
  const admins = () => [...users.values()].filter((u) => u.sysadmin).length;
  const copy = (user: UserRecord | undefined) => (user ? { ...user } : undefined);

  return {
    async getById(id: number) {
      return copy(users.get(id));
    },
    async getByUsername(username: string) {
      return copy(byName(username));
    },
    async getByEmail(email: string) {
      return copy(byEmail(email));
    },
    async list(query: UserQuery = {}): Promise<UserPage> {
      const all = [...users.values()].filter((u) => matches(u, query)).sort((a, b) => a.id - b.id);
      return pageOf(all.map((u) => ({ ...u })), query);
    },
    async create(user: NewUser) {
      if (byName(user.username)) throw new UserStoreError("duplicate_username", "user name is taken");
      if (byEmail(user.email)) throw new UserStoreError("duplicate_email", "e-mail address is taken");
      if (nextId > MAX_USER_ID) throw new UserStoreError("full", "no user id is left");
      const time = now().toISOString();
      const record = newRecord(user, nextId++, time);
      users.set(record.id, record);
      return { ...record };
    },
    async update(id: number, patch: UserPatch) {
      const current = users.get(id);
      if (!current) throw new UserStoreError("not_found", "no such user");
      if (patch.email !== undefined) {
        const owner = byEmail(patch.email);
        if (owner && owner.id !== id) throw new UserStoreError("duplicate_email", "e-mail address is taken");
      }
      checkLastAdmin(current, patch.sysadmin === false, admins());
      const next = applyPatch(current, patch, now().toISOString());
      users.set(id, next);
      return { ...next };
    },
    async delete(id: number) {
      const current = users.get(id);
      if (!current) throw new UserStoreError("not_found", "no such user");
      checkLastAdmin(current, true, admins());
      users.delete(id);
    },
    async countAdmins() {
      return admins();
    },
  };
}
