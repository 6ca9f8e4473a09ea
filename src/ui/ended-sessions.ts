/**
 * Sessions ended on the server: signing out records the session's id until
 * the cookie would have expired anyway, and every request checks the record,
 * so a copy of the cookie stops working at once (issue 41, item 12). A
 * password change or a deleted user ends sessions through the user store
 * instead (the credential version in the cookie).
 *
 * @module
 */
import type { StorageDriver } from "../storage/driver.js";

/** Where ended sessions are remembered (see `UiOptions.endedSessions`). */
export interface EndedSessions {
  /** Record that session `id`, which expires at `expires` (seconds since the epoch), has ended. */
  end(id: string, expires: number): Promise<void>;
  /** Whether session `id` (expiring at `expires`) has ended. */
  ended(id: string, expires: number): Promise<boolean>;
}

/** Ended sessions in this process's memory: enough for one process; several share {@link storageEndedSessions}. */
export function memoryEndedSessions(): EndedSessions {
  const ended = new Map<string, number>();
  return {
    async end(id, expires) {
      const now = Date.now() / 1000;
      for (const [key, until] of ended) if (until <= now) ended.delete(key);
      ended.set(id, expires);
    },
    async ended(id) {
      return ended.has(id);
    },
  };
}

const SWEEP = 100;

/**
 * Ended sessions as empty objects `<prefix>/<expires, 10 digits>-<id>` in
 * `storage`, so every process on the same storage refuses the cookie. The
 * expiry leads the key: a sign-out removes the records that have expired,
 * oldest first, and the check is one `stat`.
 */
export function storageEndedSessions(storage: StorageDriver, prefix = "_ui/ended-sessions"): EndedSessions {
  const key = (id: string, expires: number) => `${prefix}/${String(Math.max(0, Math.floor(expires))).padStart(10, "0")}-${id}`;
  return {
    async end(id, expires) {
      await storage.write(key(id, expires), new Uint8Array(0));
      const now = Math.floor(Date.now() / 1000);
      const { keys } = await storage.list(prefix, { limit: SWEEP });
      for (const old of keys) {
        if (Number(old.slice(prefix.length + 1, prefix.length + 11)) > now) break;
        await storage.delete(old);
      }
    },
    async ended(id, expires) {
      return (await storage.stat(key(id, expires))) !== undefined;
    },
  };
}
