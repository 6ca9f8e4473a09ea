/**
 * PUT /users/{user_id}/password: users change their own password by giving
 * the old one (`old_password`, `new_password`); an administrator resets
 * another user's password with `new_password` alone. Only when AuthMode is `db`.
 *
 * @module
 */
import { has, readJsonObject } from "../body.js";
import { loadUser, requireDbMode, requireSelfOrAdmin, type RouteContext } from "../context.js";
import { fail } from "../errors.js";
import { hashPassword, verifyPassword } from "../password.js";
import { requireString, validatePassword } from "../validation.js";

const FIELDS = ["old_password", "new_password"] as const;

export async function changePassword(ctx: RouteContext, id: number): Promise<Response> {
  const caller = requireSelfOrAdmin(ctx, id);
  requireDbMode(ctx, "changing passwords");
  const { settings } = ctx;
  const body = await readJsonObject(ctx.request, settings.maxBodyBytes, FIELDS);
  const self = caller.id === id;
  const oldPassword = has(body, "old_password") ? requireString(body.old_password, "old_password") : undefined;
  if (self && oldPassword === undefined) throw fail.badRequest("old_password is required to change your own password", "old_password");
  const newPassword = validatePassword(body.new_password, settings.passwordPolicy, "new_password");

  const target = await loadUser(ctx, id);
  if (self && !(await verifyPassword(oldPassword ?? "", target.passwordHash, settings.scrypt))) {
    throw fail.forbidden("the old password is wrong");
  }
  await settings.store.update(id, { passwordHash: await hashPassword(newPassword, settings.scrypt) });
  settings.log({ level: "info", msg: self ? "password changed" : "password reset", user_id: id, by: caller.id });
  return new Response(null, { status: 204 });
}
