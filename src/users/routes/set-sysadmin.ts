/**
 * PUT /users/{user_id}/sysadmin: administrators grant or revoke the
 * administrator role with `{"sysadmin_flag": true|false}`; the last
 * administrator cannot be demoted (409).
 *
 * @module
 */
import { json } from "../../http/response.js";
import { readJsonObject } from "../body.js";
import { loadUser, requireAdmin, type RouteContext } from "../context.js";
import { toPublicUser } from "../record.js";
import { requireBoolean } from "../validation.js";

export async function setSysadmin(ctx: RouteContext, id: number): Promise<Response> {
  const caller = requireAdmin(ctx);
  const body = await readJsonObject(ctx.request, ctx.settings.maxBodyBytes, ["sysadmin_flag"]);
  const sysadmin = requireBoolean(body.sysadmin_flag, "sysadmin_flag");
  const target = await loadUser(ctx, id);
  if (target.sysadmin === sysadmin) return json(toPublicUser(target));
  const record = await ctx.settings.store.update(id, { sysadmin }); // refuses the last administrator (409)
  ctx.settings.log({ level: "info", msg: sysadmin ? "administrator role granted" : "administrator role revoked", user_id: id, by: caller.id });
  return json(toPublicUser(record));
}
