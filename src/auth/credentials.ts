/**
 * Caller identification for the token endpoint: parsing `Authorization:
 * Basic`, and an in-memory {@link CredentialCheck} for tests.
 *
 * @module
 */
import type { CredentialCheck, Principal } from "./access.js";
import { equalBytes, fromB64, fromUtf8, utf8 } from "./encoding.js";

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
  /** Add a user or replace one. */
  setUser(name: string, user: MemoryUser): void;
  /** Remove a user; their refresh tokens stop working. */
  deleteUser(name: string): void;
}

/**
 * An in-memory credential check for tests and examples: plain passwords,
 * compared in constant time. Not for production (use the user store).
 *
 * @example memoryCredentials({ alice: { password: "s3cret", admin: true } })
 */
export function memoryCredentials(users: Record<string, MemoryUser>): MemoryCredentials {
  const table = new Map(Object.entries(users));
  const principal = (name: string, u: MemoryUser): Principal => {
    const p: Principal = { name, admin: u.admin ?? false };
    if (u.id !== undefined) p.id = u.id;
    return p;
  };
  const check = async (username: string, password: string) => {
    const u = table.get(username);
    const ok = equalBytes(utf8(password), utf8(u?.password ?? "\u0000no-such-user"));
    return u && ok ? principal(username, u) : undefined;
  };
  return Object.assign(check, {
    lookupUser: async (name: string) => {
      const u = table.get(name);
      return u ? principal(name, u) : undefined;
    },
    setUser: (name: string, user: MemoryUser) => void table.set(name, user),
    deleteUser: (name: string) => void table.delete(name),
  });
}
