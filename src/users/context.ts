/**
 * What every route handler receives, and the authorization checks they share.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import { fail } from "./errors.js";
import type { ScryptParams } from "./password.js";
import type { UserRecord } from "./record.js";
import type { UserStore } from "./store.js";
import type { PasswordPolicy } from "./validation.js";

/** The service settings, completed. */
export interface UserServiceSettings {
  store: UserStore;
  prefix: string;
  selfRegistration: boolean;
  authMode: string;
  passwordPolicy: PasswordPolicy;
  scrypt: ScryptParams;
  maxBodyBytes: number;
  /** Largest `page_size` of the user list. */
  maxPageSize: number;
  log: LogHook;
}

/** One request as the routes see it. */
export interface RouteContext {
  request: Request;
  url: URL;
  settings: UserServiceSettings;
  /** The signed-in caller's current record (`currentUserID`, `IsAdmin`), or `undefined` (anonymous). */
  caller: UserRecord | undefined;
}

/** The caller, or 401. */
export function requireCaller(ctx: RouteContext): UserRecord {
  if (!ctx.caller) throw fail.unauthorized();
  return ctx.caller;
}

/** An administrator caller, or 401/403. */
export function requireAdmin(ctx: RouteContext): UserRecord {
  const caller = requireCaller(ctx);
  if (!caller.sysadmin) throw fail.forbidden("administrators only");
  return caller;
}

/**
 * The caller when it is `userId` itself or an administrator, or 401/403. A
 * non-administrator gets 403 for every other id, whether or not it exists.
 */
export function requireSelfOrAdmin(ctx: RouteContext, userId: number): UserRecord {
  const caller = requireCaller(ctx);
  if (caller.id !== userId && !caller.sysadmin) throw fail.forbidden("only the user or an administrator may do this");
  return caller;
}

/** 403 unless the service manages passwords itself (AuthMode `db`). */
export function requireDbMode(ctx: RouteContext, what: string): void {
  if (ctx.settings.authMode !== "db") throw fail.forbidden(`${what} is not possible when AuthMode is not db`);
}

/** The target user, or 404. */
export async function loadUser(ctx: RouteContext, id: number): Promise<UserRecord> {
  const user = await ctx.settings.store.getById(id);
  if (!user) throw fail.notFound();
  return user;
}
