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
 * @module
 */
import { checked, type StorageDriver } from "../storage/driver.js";
import { toHex } from "../util/bytes.js";
import { Mutex } from "./lock.js";
import { legacyUid, type UserRecord } from "./record.js";
import { MAX_USER_ID, UserStoreError, fold, type NewUser, type UserPatch, type UserQuery, type UserPage, type UserStore } from "./store.js";
import { applyPatch, checkLastAdmin, matches, pageOf } from "./store-rules.js";

/** Options for {@link storageUserStore}. */
export interface StorageUserStoreOptions {
  /** Key prefix of the user data (default `_users`); one key segment or more. */
  prefix?: string;
  /** Clock for `createdAt`/`updatedAt` (tests). Default: `() => new Date()`. */
  now?: () => Date;
}

const locks = new WeakMap<StorageDriver, Mutex>();
const SAFE_KEY_TEXT = /^[a-z0-9._@+=-]+$/;

/** Create a user store persisted on `driver` (wrapped with `checked` here). */
export function storageUserStore(driver: StorageDriver, options: StorageUserStoreOptions = {}): UserStore {
  let lock = locks.get(driver);
  if (!lock) locks.set(driver, (lock = new Mutex()));
  const mutex = lock;
  const storage = checked(driver);
  const prefix = options.prefix ?? "_users";
  const now = options.now ?? (() => new Date());
  const encoder = new TextEncoder();

  const recordKey = (id: number) => `${prefix}/by-id/${String(id).padStart(10, "0")}.json`;
  const nameKey = (username: string) => `${prefix}/by-name/${keyText(username)}`;
  const emailKey = (email: string) => `${prefix}/by-email/${keyText(email)}`;
  const nextIdKey = `${prefix}/next-id`;

  function keyText(text: string): string {
    const folded = fold(text);
    if (SAFE_KEY_TEXT.test(folded) && folded !== "." && folded !== "..") return folded;
    return "X" + toHex(encoder.encode(folded));
  }

  async function readText(key: string): Promise<string | undefined> {
    const stream = await storage.read(key);
    return stream && (await new Response(stream).text());
  }

  async function writeText(key: string, text: string): Promise<void> {
    await storage.write(key, encoder.encode(text));
  }

  /** A user known to exist (the last record read), whose reads a name lookup that misses repeats. */
  let decoyId = 1;

  async function readRecord(id: number): Promise<UserRecord | undefined> {
    if (!validId(id)) return undefined;
    const text = await readText(recordKey(id));
    if (text === undefined) return undefined;
    const record = parseRecord(text);
    if (!record || record.id !== id) throw new Error(`user record ${id} in storage is corrupt`);
    decoyId = id;
    return record;
  }

  /** Follow an index entry to its record, ignoring stale entries. */
  async function viaIndex(key: string, owns: (record: UserRecord) => boolean): Promise<UserRecord | undefined> {
    const text = await readText(key);
    if (text === undefined || !/^[0-9]{1,10}$/.test(text)) return undefined;
    const record = await readRecord(Number(text));
    return record && owns(record) ? record : undefined;
  }

  /**
   * A name lookup that misses reads an existing user's record and name index
   * entry, which a hit reads too: otherwise a refused sign-in for an unknown
   * name (one read of a missing key) answers sooner than for a known name
   * with a wrong password (two reads and a parse), telling names apart.
   */
  async function byName(username: string): Promise<UserRecord | undefined> {
    const record = await viaIndex(nameKey(username), (r) => fold(r.username) === fold(username));
    if (record) return record;
    const decoy = await readRecord(decoyId).catch(() => undefined);
    if (decoy) await readText(nameKey(decoy.username)).catch(() => undefined);
    return undefined;
  }
  const byEmail = async (email: string) =>
    email === "" ? undefined : viaIndex(emailKey(email), (r) => r.email !== "" && fold(r.email) === fold(email));

  async function allIds(): Promise<number[]> {
    const ids: number[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await storage.list(`${prefix}/by-id`, after === undefined ? { limit: 1000 } : { after, limit: 1000 });
      for (const key of page.keys) {
        const match = /\/([0-9]{10})\.json$/.exec(key);
        if (match?.[1]) ids.push(Number(match[1]));
      }
      if (!page.truncated || page.keys.length === 0) break;
      after = page.keys[page.keys.length - 1];
    }
    return ids.sort((a, b) => a - b);
  }

  async function readMany(ids: number[]): Promise<UserRecord[]> {
    const records = await Promise.all(ids.map(readRecord));
    return records.filter((r): r is UserRecord => r !== undefined);
  }

  async function admins(): Promise<number> {
    return (await readMany(await allIds())).filter((r) => r.sysadmin).length;
  }

  async function allocateId(): Promise<number> {
    const text = await readText(nextIdKey);
    let id: number;
    if (text !== undefined && /^[0-9]{1,10}$/.test(text)) id = Number(text);
    else id = ((await allIds()).at(-1) ?? 0) + 1;
    if (id > MAX_USER_ID) throw new UserStoreError("full", "no user id is left");
    await writeText(nextIdKey, String(id + 1)); // before anything else: an id is never handed out twice
    return id;
  }

  /** Delete an index entry only while it still points at `id`. */
  async function release(key: string, id: number): Promise<void> {
    if ((await readText(key)) === String(id)) await storage.delete(key);
  }

  return {
    getById: readRecord,
    getByUsername: byName,
    getByEmail: byEmail,

    async list(query: UserQuery = {}): Promise<UserPage> {
      const ids = await allIds();
      if (query.username === undefined && query.email === undefined) {
        const page = pageOf(ids.map((id) => ({ id }) as UserRecord), query);
        return { users: await readMany(page.users.map((u) => u.id)), total: page.total };
      }
      return pageOf((await readMany(ids)).filter((u) => matches(u, query)), query);
    },

    create: (user: NewUser) =>
      mutex.run(async () => {
        if (await byName(user.username)) throw new UserStoreError("duplicate_username", "user name is taken");
        if (await byEmail(user.email)) throw new UserStoreError("duplicate_email", "e-mail address is taken");
        const id = await allocateId();
        const time = now().toISOString();
        const record: UserRecord = {
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
        await writeText(nameKey(user.username), String(id));
        if (user.email !== "") await writeText(emailKey(user.email), String(id));
        await writeText(recordKey(id), JSON.stringify(record));
        return record;
      }),

    update: (id: number, patch: UserPatch) =>
      mutex.run(async () => {
        const current = await readRecord(id);
        if (!current) throw new UserStoreError("not_found", "no such user");
        const emailChanges = patch.email !== undefined && fold(patch.email) !== fold(current.email);
        if (emailChanges && patch.email !== undefined) {
          const owner = await byEmail(patch.email);
          if (owner && owner.id !== id) throw new UserStoreError("duplicate_email", "e-mail address is taken");
        }
        if (patch.sysadmin === false && current.sysadmin) checkLastAdmin(current, true, await admins());
        const next = applyPatch(current, patch, now().toISOString());
        if (emailChanges && next.email !== "") await writeText(emailKey(next.email), String(id));
        await writeText(recordKey(id), JSON.stringify(next));
        if (emailChanges && current.email !== "") await release(emailKey(current.email), id);
        return next;
      }),

    delete: (id: number) =>
      mutex.run(async () => {
        const current = await readRecord(id);
        if (!current) throw new UserStoreError("not_found", "no such user");
        if (current.sysadmin) checkLastAdmin(current, true, await admins());
        await storage.delete(recordKey(id));
        await release(nameKey(current.username), id);
        if (current.email !== "") await release(emailKey(current.email), id);
      }),

    countAdmins: admins,
  };
}

function validId(id: number): boolean {
  return Number.isSafeInteger(id) && id >= 1 && id <= MAX_USER_ID;
}

function parseRecord(text: string): UserRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const strings = ["username", "email", "realname", "comment", "passwordHash", "createdAt", "updatedAt"] as const;
  if (typeof v.id !== "number" || typeof v.sysadmin !== "boolean") return undefined;
  for (const field of strings) if (typeof v[field] !== "string") return undefined;
  // Records written before uid and credentialVersion existed load with a derived uid and version 0.
  const uid = v.uid === undefined ? legacyUid(v.id, v.createdAt as string) : v.uid;
  const credentialVersion = v.credentialVersion ?? 0;
  if (typeof uid !== "string" || uid === "") return undefined;
  if (!Number.isSafeInteger(credentialVersion) || (credentialVersion as number) < 0) return undefined;
  return {
    id: v.id,
    uid,
    credentialVersion: credentialVersion as number,
    username: v.username as string,
    email: v.email as string,
    realname: v.realname as string,
    comment: v.comment as string,
    sysadmin: v.sysadmin,
    passwordHash: v.passwordHash as string,
    createdAt: v.createdAt as string,
    updatedAt: v.updatedAt as string,
  };
}
