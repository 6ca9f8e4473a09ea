/**
 * `GET /v2/_catalog`: repository names in lexical order, paged.
 *
 * @module
 */
import { callOf, type RegistryContext } from "./context.js";
import { nextLink, pageRequest } from "./pagination.js";
import { jsonBody } from "./responses.js";

/** List repositories. */
export async function listCatalog(ctx: RegistryContext, request: Request, url: URL): Promise<Response> {
  const { n, last } = pageRequest(url, ctx.settings.listEntries);
  const { repositories, truncated } = await ctx.stores.repositories.catalog(last === undefined ? { n } : { n, last }, callOf(ctx, request));
  const headers = new Headers();
  const final = repositories[repositories.length - 1];
  if (truncated && final !== undefined) headers.set("Link", nextLink(`${ctx.v2}/_catalog`, n, final));
  return jsonBody(request, { repositories }, 200, headers);
}
