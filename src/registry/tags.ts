/**
 * `GET /v2/<name>/tags/list`: tags in lexical order, paged.
 *
 * @module
 */
import type { RegistryContext } from "./context.js";
import { RegistryError } from "../oci/errors.js";
import { catalogEntry, parseKey, tagsPrefix } from "./layout.js";
import { nextLink, pageRequest } from "./pagination.js";
import { jsonBody } from "./responses.js";
import { repositoryHasObjects } from "./repository-delete.js";
import { exists } from "./storage-io.js";

/**
 * List the tags of `name`; `NAME_UNKNOWN` (404) when the repository does not
 * exist. A repository emptied of manifests is out of the catalog but answers
 * with an empty list while it still holds blob links (as Distribution does, and
 * as the OCI conformance suite's "tags list should reflect manifest deletion"
 * expects); once those are gone too it is unknown.
 */
export async function listTags(ctx: RegistryContext, request: Request, url: URL, name: string): Promise<Response> {
  const { n, last } = pageRequest(url, ctx.listEntries);
  if (!(await exists(ctx.storage, catalogEntry(name))) && !(await repositoryHasObjects(ctx.storage, name))) {
    throw new RegistryError("NAME_UNKNOWN", "repository name not known to registry", 404, { name });
  }
  if (n === 0) return jsonBody(request, { name, tags: [] });
  const prefix = tagsPrefix(name);
  const page = await ctx.storage.list(prefix, last === undefined ? { limit: n } : { after: `${prefix}/${last}`, limit: n });
  const tags = page.keys.flatMap((key) => {
    const parsed = parseKey(key);
    return parsed.kind === "tagLink" ? [parsed.tag] : [];
  });
  const headers = new Headers();
  const final = tags[tags.length - 1];
  if (page.truncated && final !== undefined) headers.set("Link", nextLink(`${ctx.v2}/${name}/tags/list`, n, final));
  return jsonBody(request, { name, tags }, 200, headers);
}
