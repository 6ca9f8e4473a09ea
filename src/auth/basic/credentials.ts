/**
 * Caller identification for the token endpoint: parsing `Authorization:
 * Basic`, and an in-memory {@link CredentialCheck} for tests.
 *
 * @module
 */
import type { CredentialCheck, Principal } from "../access.js";
import { equalBytes, fromB64, fromUtf8, utf8 } from "../../util/bytes.js";

/** User name and password from a Basic header. */
export interface BasicCredentials {
  /** The text before the first `:`. */
  username: string;
  /** The text after the first `:` (may itself contain `:`). */
  password: string;
}

/**
 * Parse `Authorization: Basic base64(user:password)`. Returns `undefined`
 * when the header is absent or another scheme, and `null` when it is Basic
 * but malformed.
 */
export function parseBasic(authorization: string | null): BasicCredentials | null | undefined {
  if (!authorization) return undefined;
  const space = authorization.indexOf(" ");
  if (space < 0 || authorization.slice(0, space).toLowerCase() !== "basic") return undefined;
  try {
    const text = fromUtf8(fromB64(authorization.slice(space + 1).trim()));
    const colon = text.indexOf(":");
    if (colon < 0) return null;
    return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  } catch {
    return null;
  }
}

/** One user of {@link memoryCredentials}. */
export interface MemoryUser {
  /** The plain password (test data only). */
  password: string;
  /** A system administrator. Default false. */
  admin?: boolean;
  /** The numeric user id, if the caller should carry one. */
  id?: number;
}

/** A {@link CredentialCheck} holding users in memory, with lookup for refresh tokens. */
export interface MemoryCredentials extends CredentialCheck {
  /** The principal of a user, or `undefined` (used by the token service to re-check refresh tokens). */
  lookupUser(name: string): Promise<Principal | undefined>;
  /** Add a user, or replace one: a replaced user's refresh tokens stop working (its credential version changes). */
  setUser(name: string, user: MemoryUser): void;
  /** Remove a user; their refresh tokens stop working, also once a new user takes the name (it gets a new `uid`). */
  deleteUser(name: string): void;
}

interface MemoryEntry {
  user: MemoryUser;
  uid: string;
  version: number;
}

/**
 * An in-memory credential check for tests and examples: plain passwords,
 * compared in constant time. Each user has a random `uid` and a credential
 * version raised by `setUser`, as store users do. Not for production (use
 * the user store).
 *
 * @example memoryCredentials({ alice: { password: "s3cret", admin: true } })
 */
export function memoryCredentials(users: Record<string, MemoryUser>): MemoryCredentials {
  const table = new Map<string, MemoryEntry>();
  const setUser = (name: string, user: MemoryUser) => {
    const old = table.get(name);
    table.set(name, old ? { user, uid: old.uid, version: old.version + 1 } : { user, uid: crypto.randomUUID(), version: 0 });
  };
  for (const [name, user] of Object.entries(users)) setUser(name, user);
  const principal = (name: string, e: MemoryEntry): Principal => {
    const p: Principal = { name, admin: e.user.admin ?? false, uid: e.uid, credentialVersion: e.version };
    if (e.user.id !== undefined) p.id = e.user.id;
    return p;
  };
  const check = async (username: string, password: string) => {
    const e = table.get(username);
    const ok = equalBytes(utf8(password), utf8(e?.user.password ?? "\u0000no-such-user"));
    return e && ok ? principal(username, e) : undefined;
  };
  return Object.assign(check, {
    lookupUser: async (name: string) => {
      const e = table.get(name);
      return e ? principal(name, e) : undefined;
    },
    setUser,
    deleteUser: (name: string) => void table.delete(name),
  });
}
