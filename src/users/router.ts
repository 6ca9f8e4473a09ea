/**
 * The routes of the management service under its prefix, and which methods
 * each allows. `user_id` is digits only, 1 to 2^31 - 1, without leading
 * zeros; any other segment is not a user id (404).
 *
 * @module
 */
import { MAX_USER_ID } from "./store.js";

/** A matched route. */
export type UserRoute =
  | { kind: "users" }
  | { kind: "current" }
  | { kind: "user"; id: number }
  | { kind: "password"; id: number }
  | { kind: "sysadmin"; id: number };

/** The methods each route answers; anything else is 405 with `Allow`. */
export const ALLOWED_METHODS: Record<UserRoute["kind"], readonly string[]> = {
  users: ["GET", "POST"],
  current: ["GET"],
  user: ["GET", "PUT", "DELETE"],
  password: ["PUT"],
  sysadmin: ["PUT"],
};

/** Normalize a mount prefix: `""` or `/x/y`, without a trailing slash. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  return trimmed === "" ? "" : trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** Match a path (`/api/users`, `/api/users/`, `/api/users/7/password`, …) or `undefined`. */
export function matchRoute(pathname: string, prefix: string): UserRoute | undefined {
  const base = `${prefix}/users`;
  if (pathname === base || pathname === `${base}/`) return { kind: "users" };
  if (!pathname.startsWith(`${base}/`)) return undefined;
  const rest = pathname.slice(base.length + 1).replace(/\/$/, "").split("/");
  const [first, second, ...more] = rest;
  if (first === undefined || more.length > 0) return undefined;
  if (first === "current") return second === undefined ? { kind: "current" } : undefined;
  const id = parseUserId(first);
  if (id === undefined) return undefined;
  if (second === undefined) return { kind: "user", id };
  if (second === "password") return { kind: "password", id };
  if (second === "sysadmin") return { kind: "sysadmin", id };
  return undefined;
}

/** A path segment as a user id, or `undefined`. */
export function parseUserId(segment: string): number | undefined {
  if (!/^[1-9][0-9]{0,9}$/.test(segment)) return undefined;
  const id = Number(segment);
  return id <= MAX_USER_ID ? id : undefined;
}
