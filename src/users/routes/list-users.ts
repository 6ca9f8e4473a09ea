/**
 * GET /users: administrators list users, paged, filtered by `username` and
 * `email` (case-insensitive "contains").
 *
 * @module
 */
import { json } from "../../http/response.js";
import { requireAdmin, type RouteContext } from "../context.js";
import { fail } from "../errors.js";
import { pageHeaders, readPage } from "../pagination.js";
import { toPublicUser } from "../record.js";

export async function listUsers(ctx: RouteContext): Promise<Response> {
  requireAdmin(ctx);
  const params = ctx.url.searchParams;
  const page = readPage(params, ctx.settings.maxPageSize);
  const filter = (field: "username" | "email") => {
    const value = params.get(field);
    if (value !== null && value.length > 255) throw fail.badRequest(`${field} filter is too long`, field);
    return value === null || value === "" ? {} : { [field]: value };
  };
  const result = await ctx.settings.store.list({
    ...filter("username"),
    ...filter("email"),
    offset: (page.page - 1) * page.pageSize,
    limit: page.pageSize,
  });
  return json(result.users.map(toPublicUser), 200, pageHeaders(ctx.url, page, result.total));
}
