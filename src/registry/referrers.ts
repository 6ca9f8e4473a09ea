/**
 * `GET /v2/<name>/referrers/<digest>`: an OCI image index of the manifests
 * whose `subject` is `<digest>`, optionally filtered by `?artifactType=`.
 *
 * @module
 */
import { callOf, type RegistryContext } from "./context.js";
import type { Digest } from "../oci/digest.js";
import { jsonBody } from "./responses.js";
import { MEDIA_TYPES } from "../oci/wire.js";

/**
 * List referrers. An unknown subject gets an empty index (200), as the spec
 * asks. At most `limits.listEntries` descriptors are returned.
 */
export async function listReferrers(ctx: RegistryContext, request: Request, url: URL, name: string, subject: Digest): Promise<Response> {
  const artifactType = url.searchParams.get("artifactType");
  const limit = ctx.settings.listEntries;
  const manifests = await ctx.stores.manifests.referrers(name, subject, artifactType === null ? { limit } : { artifactType, limit }, callOf(ctx, request));
  const headers = new Headers();
  if (artifactType !== null) headers.set("OCI-Filters-Applied", "artifactType");
  return jsonBody(request, { schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests }, 200, headers, MEDIA_TYPES.ociIndex);
}
