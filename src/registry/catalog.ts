/**
 * `GET /v2/_catalog`: repository names in lexical order, paged. Reads the
 * repository index (one marker per repository), never the whole store.
 *
 * @module
 */
import type { RegistryContext } from "./context.js";
import { CATALOG_PREFIX, catalogEntry, parseKey } from "./layout.js";
import { nextLink, pageRequest } from "./pagination.js";
import { jsonBody } from "./responses.js";

/** List repositories. */
export async function listCatalog(ctx: RegistryContext, request: Request, url: URL): Promise<Response> {
  const { n, last } = pageRequest(url, ctx.listEntries);
  if (n === 0) return jsonBody(request, { repositories: [] });
  const page = await ctx.storage.list(CATALOG_PREFIX, last === undefined ? { limit: n } : { after: catalogEntry(last), limit: n });
  const repositories = page.keys.flatMap((key) => {
    const parsed = parseKey(key);
    return parsed.kind === "catalogEntry" ? [parsed.name] : [];
  });
  const headers = new Headers();
  const final = repositories[repositories.length - 1];
  if (page.truncated && final !== undefined) headers.set("Link", nextLink(`${ctx.v2}/_catalog`, n, final));
  return jsonBody(request, { repositories }, 200, headers);
}
