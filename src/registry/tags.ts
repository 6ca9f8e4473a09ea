/**
 * `GET /v2/<name>/tags/list`: tags in lexical order, paged.
 *
 * @module
 */
import { callOf, type RegistryContext } from "./context.js";
import { nextLink, pageRequest } from "./pagination.js";
import { jsonBody } from "./responses.js";

/** List the tags of `name`; `NAME_UNKNOWN` (404) when the repository does not exist. */
export async function listTags(ctx: RegistryContext, request: Request, url: URL, name: string): Promise<Response> {
  const { n, last } = pageRequest(url, ctx.settings.listEntries);
  const { tags, truncated } = await ctx.stores.tags.list(name, last === undefined ? { n } : { n, last }, callOf(ctx, request));
  const headers = new Headers();
  const final = tags[tags.length - 1];
  if (truncated && final !== undefined) headers.set("Link", nextLink(`${ctx.v2}/${name}/tags/list`, n, final));
  return jsonBody(request, { name, tags }, 200, headers);
}
