/**
 * DELETE /users/{user_id}: administrators delete a user; not themselves, and
 * never the last administrator.
 *
 * @module
 */
import { loadUser, requireAdmin, type RouteContext } from "../context.js";
import { fail } from "../errors.js";

export async function deleteUser(ctx: RouteContext, id: number): Promise<Response> {
  const caller = requireAdmin(ctx);
  if (caller.id === id) throw fail.forbidden("administrators cannot delete themselves");
  const target = await loadUser(ctx, id);
  await ctx.settings.store.delete(id); // refuses the last administrator (409)
  ctx.settings.log({ level: "info", msg: "user deleted", user_id: id, username: target.username, by: caller.id });
  return new Response(null, { status: 204 });
}
