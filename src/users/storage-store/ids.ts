/**
 * The id counter: `<prefix>/next-id` holds the next id to assign; without it
 * (a store written before it existed, or lost) the next id follows the
 * highest record.
 *
 * @module
 */
import { MAX_USER_ID, UserStoreError } from "../store.js";
import { readText, writeText, type StoreContext } from "./context.js";
import { allIds } from "./records.js";

/** Take the next id (`full` when none is left); called under the store's lock. */
export async function allocateId(ctx: StoreContext): Promise<number> {
  const text = await readText(ctx, ctx.keys.nextId);
  let id: number;
  if (text !== undefined && /^[0-9]{1,10}$/.test(text)) id = Number(text);
  else id = ((await allIds(ctx)).at(-1) ?? 0) + 1;
  if (id > MAX_USER_ID) throw new UserStoreError("full", "no user id is left");
  await writeText(ctx, ctx.keys.nextId, String(id + 1)); // before anything else: an id is never handed out twice
  return id;
}
