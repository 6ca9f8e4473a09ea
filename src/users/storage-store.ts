/**
 * A {@link UserStore} kept on a storage driver, so that users survive restarts
 * (with the filesystem driver) and several handlers can share them.
 *
 * Layout under the prefix (default `_users`):
 *
 * | Key | Holds |
 * |---|---|
 * | `<prefix>/by-id/<id, 10 digits>.json` | the record (JSON); the source of truth. Records written before `uid` and `credentialVersion` existed load with `legacyUid(id, createdAt)` and 0, and keep them when next written |
 * | `<prefix>/by-name/<folded name>` | the id owning that user name (an index) |
 * | `<prefix>/by-email/<folded e-mail>` | the id owning that e-mail (an index) |
 * | `<prefix>/next-id` | the next id to assign |
 *
 * A name or e-mail that is not made of key-safe characters is stored as `X`
 * followed by the hex of its UTF-8 bytes (folded text never holds `X`).
 *
 * Every write is atomic (`driver.write`), and a change that touches several
 * keys writes them in an order that makes the record the commit point: index
 * entries are claimed before the record is written and released after it is
 * deleted, and every index hit is checked against the record it names. A crash
 * between two writes leaves at worst a stale index entry, which is ignored and
 * later overwritten; never a user without its uniqueness, never a reused id.
 *
 * Concurrency: mutations are serialized by a lock shared by every store built
 * on the same driver object in this process, so uniqueness, id allocation and
 * the last-administrator rule cannot race within a process. Across processes
 * sharing one storage there is no lock: two processes that create users at the
 * same moment can race on `next-id` or on the same name. Run user management
 * in one process (reads, sign-ins and the registry can run anywhere).
 *
 * `list` and `countAdmins` read every record: fine for thousands of users,
 * not for millions.
 *
 * The parts live in `storage-store/`, over one `StoreContext` (context.ts):
 * `keys.ts` (this layout), `records.ts` (record read/write, listing),
 * `names.ts` (the name and e-mail indexes), `ids.ts` (the id counter),
 * `writes.ts` (create, update, delete).
 *
 * @module
 */
import { checked, type StorageDriver } from "../storage/driver.js";
import { Mutex } from "./lock.js";
import type { UserStore } from "./store.js";
import type { StoreContext } from "./storage-store/context.js";
import { userKeys } from "./storage-store/keys.js";
import { byEmail, byName } from "./storage-store/names.js";
import { countAdmins, listUsers, readRecord } from "./storage-store/records.js";
import { createUser, deleteUser, updateUser } from "./storage-store/writes.js";

/** Options for {@link storageUserStore}. */
export interface StorageUserStoreOptions {
  /** Key prefix of the user data (default `_users`); one key segment or more. */
  prefix?: string;
  /** Clock for `createdAt`/`updatedAt` (tests). Default: `() => new Date()`. */
  now?: () => Date;
}

/** One lock per driver object, shared by every store built on it in this process. */
const locks = new WeakMap<StorageDriver, Mutex>();

/** Create a user store persisted on `driver` (wrapped with `checked` here). */
export function storageUserStore(driver: StorageDriver, options: StorageUserStoreOptions = {}): UserStore {
  let mutex = locks.get(driver);
  if (!mutex) locks.set(driver, (mutex = new Mutex()));
  const ctx: StoreContext = {
    storage: checked(driver),
    keys: userKeys(options.prefix ?? "_users"),
    now: options.now ?? (() => new Date()),
    mutex,
    decoyId: 1,
  };
  return {
    getById: (id) => readRecord(ctx, id),
    getByUsername: (username) => byName(ctx, username),
    getByEmail: (email) => byEmail(ctx, email),
    list: (query) => listUsers(ctx, query),
    create: (user) => ctx.mutex.run(() => createUser(ctx, user)),
    update: (id, patch) => ctx.mutex.run(() => updateUser(ctx, id, patch)),
    delete: (id) => ctx.mutex.run(() => deleteUser(ctx, id)),
    countAdmins: () => countAdmins(ctx),
  };
}
