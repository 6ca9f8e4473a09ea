/**
 * The name and e-mail indexes: a key per folded name or e-mail holding the id
 * that owns it. An index entry is only a hint: every hit is checked against
 * the record it names, so a stale entry (left by a crash between two writes)
 * is ignored and later overwritten.
 *
 * @module
 */
import type { UserRecord } from "../record.js";
import { fold } from "../store.js";
import { readText, writeText, type StoreContext } from "./context.js";
import { readRecord } from "./records.js";

/**
 * The user named `username`. A lookup that misses reads an existing user's
 * record and name index entry, which a hit reads too: otherwise a refused
 * sign-in for an unknown name (one read of a missing key) answers sooner than
 * for a known name with a wrong password (two reads and a parse), telling
 * names apart.
 */
export async function byName(ctx: StoreContext, username: string): Promise<UserRecord | undefined> {
  const record = await viaIndex(ctx, ctx.keys.name(username), (r) => fold(r.username) === fold(username));
  if (record) return record;
  const decoy = await readRecord(ctx, ctx.decoyId).catch(() => undefined);
  if (decoy) await readText(ctx, ctx.keys.name(decoy.username)).catch(() => undefined);
  return undefined;
}

/** The user with e-mail `email`; nobody for the empty e-mail. */
export async function byEmail(ctx: StoreContext, email: string): Promise<UserRecord | undefined> {
  return email === "" ? undefined : viaIndex(ctx, ctx.keys.email(email), (r) => r.email !== "" && fold(r.email) === fold(email));
}

/** Point the index entry `key` at `id` (before the record is written: the record is the commit point). */
export function claim(ctx: StoreContext, key: string, id: number): Promise<void> {
  return writeText(ctx, key, String(id));
}

/** Delete an index entry only while it still points at `id`. */
export async function release(ctx: StoreContext, key: string, id: number): Promise<void> {
  if ((await readText(ctx, key)) === String(id)) await ctx.storage.delete(key);
}

/** Follow an index entry to its record, ignoring stale entries. */
async function viaIndex(ctx: StoreContext, key: string, owns: (record: UserRecord) => boolean): Promise<UserRecord | undefined> {
  const text = await readText(ctx, key);
  if (text === undefined || !/^[0-9]{1,10}$/.test(text)) return undefined;
  const record = await readRecord(ctx, Number(text));
  return record && owns(record) ? record : undefined;
}
