/**
 * User records on storage: one JSON object per user under its id, the source
 * of truth of the store. Reading, parsing (records written before `uid` and
 * `credentialVersion` existed included), listing every id, and what is
 * computed over all records (the page of `list`, the administrator count).
 *
 * @module
 */
import { legacyUid, type UserRecord } from "../record.js";
import { MAX_USER_ID, type UserPage, type UserQuery } from "../store.js";
import { matches, pageOf } from "../store-rules.js";
import { readText, writeText, type StoreContext } from "./context.js";
import { idOfRecordKey } from "./keys.js";

/** The record of `id`, or `undefined`; a record that does not parse, or names another id, throws. */
export async function readRecord(ctx: StoreContext, id: number): Promise<UserRecord | undefined> {
  if (!validId(id)) return undefined;
  const text = await readText(ctx, ctx.keys.record(id));
  if (text === undefined) return undefined;
  const record = parseRecord(text);
  if (!record || record.id !== id) throw new Error(`user record ${id} in storage is corrupt`);
  ctx.decoyId = id;
  return record;
}

/** Write `record` under its id: the commit point of every change. */
export function writeRecord(ctx: StoreContext, record: UserRecord): Promise<void> {
  return writeText(ctx, ctx.keys.record(record.id), JSON.stringify(record));
}

/** The records of `ids` that exist, in the order given. */
export async function readMany(ctx: StoreContext, ids: number[]): Promise<UserRecord[]> {
  const records = await Promise.all(ids.map((id) => readRecord(ctx, id)));
  return records.filter((r): r is UserRecord => r !== undefined);
}

/** Every id with a record, ascending. */
export async function allIds(ctx: StoreContext): Promise<number[]> {
  const ids: number[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await ctx.storage.list(ctx.keys.records, after === undefined ? { limit: 1000 } : { after, limit: 1000 });
    for (const key of page.keys) {
      const id = idOfRecordKey(key);
      if (id !== undefined) ids.push(id);
    }
    if (!page.truncated || page.keys.length === 0) break;
    after = page.keys[page.keys.length - 1];
  }
  return ids.sort((a, b) => a - b);
}

/** `UserStore.list`: without a filter only the page's records are read; with one, every record. */
export async function listUsers(ctx: StoreContext, query: UserQuery = {}): Promise<UserPage> {
  const ids = await allIds(ctx);
  if (query.username === undefined && query.email === undefined) {
    const page = pageOf(ids.map((id) => ({ id }) as UserRecord), query);
    return { users: await readMany(ctx, page.users.map((u) => u.id)), total: page.total };
  }
  return pageOf((await readMany(ctx, ids)).filter((u) => matches(u, query)), query);
}

/** How many users are administrators (reads every record). */
export async function countAdmins(ctx: StoreContext): Promise<number> {
  return (await readMany(ctx, await allIds(ctx))).filter((r) => r.sysadmin).length;
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
