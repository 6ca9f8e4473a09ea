/**
 * GET /users/current (any signed-in user: their own record) and
 * GET /users/{user_id} (the user or an administrator).
 *
 * @module
 */
import { json } from "../../http/response.js";
import { loadUser, requireCaller, requireSelfOrAdmin, type RouteContext } from "../context.js";
import { toPublicUser } from "../record.js";

export async function getCurrentUser(ctx: RouteContext): Promise<Response> {
  return json(toPublicUser(requireCaller(ctx)));
}

export async function getUser(ctx: RouteContext, id: number): Promise<Response> {
  requireSelfOrAdmin(ctx, id);
  return json(toPublicUser(await loadUser(ctx, id)));
}
