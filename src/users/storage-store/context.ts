/**
 * The state one storage user store shares between its modules: what the
 * closure of `storageUserStore` used to hold. Made once by
 * `storageUserStore` and passed down.
 *
 * @module
 */
import type { StorageDriver } from "../../storage/driver.js";
import type { Mutex } from "../lock.js";
import type { UserKeys } from "./keys.js";

/** One store's storage, key layout, clock and lock, and its one piece of mutable state. */
export interface StoreContext {
  /** The driver, wrapped with `checked`. */
  readonly storage: StorageDriver;
  /** Where each piece of user data lives (keys.ts). */
  readonly keys: UserKeys;
  /** Clock for `createdAt` and `updatedAt`. */
  readonly now: () => Date;
  /** Serializes the mutations of every store on the same driver object. */
  readonly mutex: Mutex;
  /** A user known to exist (the last record read), whose reads a name lookup that misses repeats (names.ts). */
  decoyId: number;
}

const encoder = new TextEncoder();

/** The UTF-8 text at `key`, or `undefined` when there is none. */
export async function readText(ctx: StoreContext, key: string): Promise<string | undefined> {
  const stream = await ctx.storage.read(key);
  return stream && (await new Response(stream).text());
}

/** Write `text` at `key` (atomically, as every driver write is). */
export async function writeText(ctx: StoreContext, key: string, text: string): Promise<void> {
  await ctx.storage.write(key, encoder.encode(text));
}
