/**
 * PUT /users/{user_id}: the user or an administrator changes the profile
 * fields `email`, `realname`, `comment`. The read-only fields of the record
 * may be sent back unchanged (a GET, edited, PUT back): `user_id` and
 * `username` must then equal the target's, and `sysadmin_flag` its current
 * value (a non-administrator asking for `true` gets 403; the role changes only
 * through `/sysadmin`). `creation_time` and `update_time` are ignored.
 *
 * @module
 */
import { json } from "../../http/response.js";
import { has, readJsonObject } from "../body.js";
import { loadUser, requireSelfOrAdmin, type RouteContext } from "../context.js";
import { fail } from "../errors.js";
import { toPublicUser } from "../record.js";
import type { UserPatch } from "../store.js";
import { TEXT_LIMITS, requireBoolean, validateEmail, validateText } from "../validation.js";

const FIELDS = ["email", "realname", "comment", "user_id", "username", "sysadmin_flag", "creation_time", "update_time"] as const;

export async function updateUser(ctx: RouteContext, id: number): Promise<Response> {
  const caller = requireSelfOrAdmin(ctx, id);
  const { settings } = ctx;
  const body = await readJsonObject(ctx.request, settings.maxBodyBytes, FIELDS);

  if (has(body, "sysadmin_flag") && requireBoolean(body.sysadmin_flag, "sysadmin_flag") && !caller.sysadmin) {
    throw fail.forbidden("only an administrator may grant the administrator role");
  }
  if (has(body, "user_id") && body.user_id !== id) throw fail.badRequest("user_id in the body does not match the path", "user_id");

  const patch: UserPatch = {};
  if (has(body, "email")) patch.email = validateEmail(body.email);
  if (has(body, "realname")) patch.realname = validateText(body.realname, "realname", TEXT_LIMITS.realname);
  if (has(body, "comment")) patch.comment = validateText(body.comment, "comment", TEXT_LIMITS.comment);

  const target = await loadUser(ctx, id);
  if (has(body, "username") && (typeof body.username !== "string" || body.username.toLowerCase() !== target.username.toLowerCase())) {
    throw fail.badRequest("username cannot be changed", "username");
  }
  if (has(body, "sysadmin_flag") && body.sysadmin_flag !== target.sysadmin) {
    throw fail.badRequest("the administrator role is changed through PUT /users/{user_id}/sysadmin", "sysadmin_flag");
  }
  if (patch.email !== undefined) {
    const owner = await settings.store.getByEmail(patch.email);
    if (owner && owner.id !== id) throw fail.conflict("e-mail address is taken", "email");
  }
  const record = Object.keys(patch).length > 0 ? await settings.store.update(id, patch) : target;
  return json(toPublicUser(record));
}
