/**
 * Sign-in throttling (`registry-kit/server` uses it for the web page, the
 * token service and Basic on the management API). Failures are counted per
 * (name, address), per address and per name; the policy (docs/security.md):
 *
 * - A (name, address) pair has {@link ThrottlePolicy.pairFree} free failures;
 *   each failure after them locks the pair for a time that doubles from
 *   `baseLockMs` up to `maxLockMs` (slow down, then lock).
 * - An address has `addressFree` free failures over all names (password
 *   spraying); after them it is locked the same way, for every name.
 * - A name failing more than `nameFree` times over all addresses is "under
 *   attack": from then on one failure locks that (name, address) pair for
 *   `maxLockMs` at once. A name is never locked as a whole, so an address
 *   that has not failed (the administrator's) still signs in.
 * - A success clears its pair's count; counts are forgotten after
 *   `windowMs` without a failure; every lock ends at its time.
 *
 * Names compare case-insensitively (as the user store's). State is in
 * memory, per process, bounded by {@link ThrottlePolicy.maxEntries}.
 *
 * @module
 */

/** The numbers of the policy. */
export interface ThrottlePolicy {
  /** Failures of one (name, address) answered before locking starts. Default 5. */
  pairFree: number;
  /** Failures from one address, any names, before it is locked. Default 20. */
  addressFree: number;
  /** Failures of one name, any addresses, before each further failure locks its pair for `maxLockMs`. Default 50. */
  nameFree: number;
  /** The first lock. Default 1 s. */
  baseLockMs: number;
  /** The longest lock. Default 15 min. */
  maxLockMs: number;
  /** Counts are forgotten after this long without a failure. Default 15 min. */
  windowMs: number;
  /** Entries kept per table; the oldest go first. Default 10 000. */
  maxEntries: number;
}

/** The defaults of {@link ThrottlePolicy}. */
export const DEFAULT_THROTTLE: ThrottlePolicy = {
  pairFree: 5, addressFree: 20, nameFree: 50, baseLockMs: 1000, maxLockMs: 15 * 60_000, windowMs: 15 * 60_000, maxEntries: 10_000,
};

/** The throttle of sign-ins. */
export interface Throttle {
  /** Milliseconds until `name` may be tried from `address` again; 0 when it may now. */
  retryAfter(name: string, address: string | undefined): number;
  /** Count a failed sign-in. */
  failed(name: string, address: string | undefined): void;
  /** Count a successful sign-in: clears the pair's failures. */
  succeeded(name: string, address: string | undefined): void;
}

interface Count {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}

/** A throttle with `policy` (defaults for what it leaves out) and an injectable clock. */
export function createThrottle(policy: Partial<ThrottlePolicy> = {}, now: () => number = Date.now): Throttle {
  const p: ThrottlePolicy = { ...DEFAULT_THROTTLE, ...policy };
  const pairs = new Map<string, Count>();
  const addresses = new Map<string, Count>();
  const names = new Map<string, Count>();
  // An unknown address (a handler called in process) is one address: still throttled.
  const addr = (address: string | undefined) => address ?? "?";
  // Names compare case-insensitively, as the user store's do: `Admin` and `ADMIN` are one name, not 32 fresh counts.
  const key = (name: string) => name.slice(0, 256).toLowerCase();
  const pairKey = (name: string, address: string | undefined) => `${addr(address)}\n${key(name)}`;

  const current = (table: Map<string, Count>, key: string, t: number): Count | undefined => {
    const count = table.get(key);
    if (count && t - count.lastFailure > p.windowMs && count.lockedUntil <= t) {
      table.delete(key);
      return undefined;
    }
    return count;
  };
  const lockFor = (failuresOver: number): number => Math.min(p.maxLockMs, p.baseLockMs * 2 ** Math.min(failuresOver - 1, 30));
  const bump = (table: Map<string, Count>, key: string, t: number, free: number, atOnce: boolean): void => {
    const count = current(table, key, t) ?? { failures: 0, lastFailure: t, lockedUntil: 0 };
    table.delete(key); // re-inserted last: the Map's order is the eviction order
    count.failures++;
    count.lastFailure = t;
    if (atOnce) count.lockedUntil = t + p.maxLockMs;
    else if (count.failures > free) count.lockedUntil = t + lockFor(count.failures - free);
    table.set(key, count);
    while (table.size > p.maxEntries) table.delete(table.keys().next().value as string);
  };

  return {
    retryAfter(name, address) {
      const t = now();
      const until = Math.max(current(pairs, pairKey(name, address), t)?.lockedUntil ?? 0, current(addresses, addr(address), t)?.lockedUntil ?? 0);
      return Math.max(0, until - t);
    },
    failed(name, address) {
      const t = now();
      bump(names, key(name), t, Infinity, false);
      const underAttack = (names.get(key(name))?.failures ?? 0) > p.nameFree;
      bump(pairs, pairKey(name, address), t, p.pairFree, underAttack);
      bump(addresses, addr(address), t, p.addressFree, false);
    },
    succeeded(name, address) {
      pairs.delete(pairKey(name, address));
    },
  };
}
