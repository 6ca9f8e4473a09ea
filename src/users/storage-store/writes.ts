/**
 * The mutations of the storage user store, each run under the store's lock
 * by `storageUserStore`. Each writes its keys in an order that makes the
 * record the commit point: index entries are claimed before the record is
 * written and released after it is deleted or no longer names them.
 *
 * @module
 */
import type { UserRecord } from "../record.js";
import { UserStoreError, fold, type NewUser, type UserPatch } from "../store.js";
import { applyPatch, checkLastAdmin, newRecord } from "../store-rules.js";
import type { StoreContext } from "./context.js";
import { allocateId } from "./ids.js";
import { byEmail, byName, claim, release } from "./names.js";
import { countAdmins, readRecord, writeRecord } from "./records.js";

/** `UserStore.create`: `duplicate_username`, `duplicate_email`, `full`. */
export async function createUser(ctx: StoreContext, user: NewUser): Promise<UserRecord> {
  if (await byName(ctx, user.username)) throw new UserStoreError("duplicate_username", "user name is taken");
  if (await byEmail(ctx, user.email)) throw new UserStoreError("duplicate_email", "e-mail address is taken");
  const id = await allocateId(ctx);
  const time = ctx.now().toISOString();
  const record = newRecord(user, id, time);
  await claim(ctx, ctx.keys.name(user.username), id);
  if (user.email !== "") await claim(ctx, ctx.keys.email(user.email), id);
  await writeRecord(ctx, record);
  return record;
}

/** `UserStore.update`: `not_found`, `duplicate_email`, `last_admin`. */
export async function updateUser(ctx: StoreContext, id: number, patch: UserPatch): Promise<UserRecord> {
  const current = await readRecord(ctx, id);
  if (!current) throw new UserStoreError("not_found", "no such user");
  const emailChanges = patch.email !== undefined && fold(patch.email) !== fold(current.email);
  if (emailChanges && patch.email !== undefined) {
    const owner = await byEmail(ctx, patch.email);
    if (owner && owner.id !== id) throw new UserStoreError("duplicate_email", "e-mail address is taken");
  }
  if (patch.sysadmin === false && current.sysadmin) checkLastAdmin(current, true, await countAdmins(ctx));
  const next = applyPatch(current, patch, ctx.now().toISOString());
  if (emailChanges && next.email !== "") await claim(ctx, ctx.keys.email(next.email), id);
  await writeRecord(ctx, next);
  if (emailChanges && current.email !== "") await release(ctx, ctx.keys.email(current.email), id);
  return next;
}

/** `UserStore.delete`: `not_found`, `last_admin`. */
export async function deleteUser(ctx: StoreContext, id: number): Promise<void> {
  const current = await readRecord(ctx, id);
  if (!current) throw new UserStoreError("not_found", "no such user");
  if (current.sysadmin) checkLastAdmin(current, true, await countAdmins(ctx));
  await ctx.storage.delete(ctx.keys.record(id));
  await release(ctx, ctx.keys.name(current.username), id);
  if (current.email !== "") await release(ctx, ctx.keys.email(current.email), id);
}
