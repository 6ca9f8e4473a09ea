/**
 * `GET /v2/<name>/referrers/<digest>`: an OCI image index of the manifests
 * whose `subject` is `<digest>`, optionally filtered by `?artifactType=`.
 *
 * @module
 */
import type { RegistryContext } from "./context.js";
import type { Digest } from "../oci/digest.js";
import { referrersPrefix } from "./layout.js";
import { jsonBody } from "./responses.js";
import { eachKey, readJson } from "./storage-io.js";
import { MEDIA_TYPES } from "../oci/wire.js";

/** Referrer entries read at once. */
const READ_BATCH = 16;

interface ReferrerDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}

/**
 * List referrers. An unknown subject gets an empty index (200), as the spec
 * asks. At most `limits.listEntries` descriptors are returned.
 */
export async function listReferrers(ctx: RegistryContext, request: Request, url: URL, name: string, subject: Digest): Promise<Response> {
  const artifactType = url.searchParams.get("artifactType");
  const manifests: ReferrerDescriptor[] = [];
  // The entries are small objects read a batch at a time (one by one, 1,000 referrers
  // took 2.1 s on fs; see bench/growth.ts), kept in key order.
  let batch: string[] = [];
  const take = async (): Promise<void> => {
    const entries = await Promise.all(batch.map((key) => readJson<ReferrerDescriptor>(ctx.storage, key)));
    batch = [];
    for (const entry of entries) {
      if (!entry || (artifactType !== null && entry.artifactType !== artifactType)) continue;
      if (manifests.length < ctx.listEntries) manifests.push(entry);
    }
  };
  for await (const key of eachKey(ctx.storage, referrersPrefix(name, subject))) {
    batch.push(key);
    if (batch.length === READ_BATCH) await take();
    if (manifests.length >= ctx.listEntries) break;
  }
  if (batch.length > 0) await take();
  const headers = new Headers();
  if (artifactType !== null) headers.set("OCI-Filters-Applied", "artifactType");
  return jsonBody(request, { schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests }, 200, headers, MEDIA_TYPES.ociIndex);
}
