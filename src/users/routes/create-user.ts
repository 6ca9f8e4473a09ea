/**
 * POST /users: create a user. Anyone may when SelfRegistration is on,
 * otherwise administrators only; never when AuthMode is not `db`. Only an
 * administrator may create an administrator.
 *
 * @module
 */
import { json } from "../../http/response.js";
import { has, readJsonObject } from "../body.js";
import { requireAdmin, requireDbMode, type RouteContext } from "../context.js";
import { fail } from "../errors.js";
import { hashPassword } from "../password.js";
import { toPublicUser } from "../record.js";
import { TEXT_LIMITS, requireBoolean, validateEmail, validatePassword, validateText, validateUsername } from "../validation.js";

const FIELDS = ["username", "email", "password", "realname", "comment", "sysadmin_flag"] as const;

export async function createUser(ctx: RouteContext): Promise<Response> {
  requireDbMode(ctx, "creating users");
  const { settings } = ctx;
  const caller = settings.selfRegistration ? ctx.caller : requireAdmin(ctx);
  const body = await readJsonObject(ctx.request, settings.maxBodyBytes, FIELDS);

  const sysadmin = has(body, "sysadmin_flag") ? requireBoolean(body.sysadmin_flag, "sysadmin_flag") : false;
  if (sysadmin && !caller?.sysadmin) throw fail.forbidden("only an administrator may create an administrator");

  const username = validateUsername(body.username);
  const email = validateEmail(body.email);
  const password = validatePassword(body.password, settings.passwordPolicy);
  const realname = has(body, "realname") ? validateText(body.realname, "realname", TEXT_LIMITS.realname) : "";
  const comment = has(body, "comment") ? validateText(body.comment, "comment", TEXT_LIMITS.comment) : "";

  // cheap duplicate checks before the expensive hash; the store re-checks atomically
  if (await settings.store.getByUsername(username)) throw fail.conflict("user name is taken", "username");
  if (await settings.store.getByEmail(email)) throw fail.conflict("e-mail address is taken", "email");

  const passwordHash = await hashPassword(password, settings.scrypt);
  const record = await settings.store.create({ username, email, realname, comment, sysadmin, passwordHash });
  settings.log({ level: "info", msg: "user created", user_id: record.id, username: record.username, sysadmin, by: caller?.id ?? null });
  return json(toPublicUser(record), 201, { location: `${settings.prefix}/users/${record.id}` });
}
