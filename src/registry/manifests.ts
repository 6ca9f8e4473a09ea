/**
 * Manifest GET, HEAD, PUT and DELETE, by tag or digest. A manifest is stored
 * under the digest of its exact bytes and served back byte for byte, whatever
 * the `Accept` header says (no conversion). HTTP ↔ store calls only.
 *
 * @module
 */
import { BodyTooLargeError, readLimited } from "../http/body.js";
import { inMemoryResponse } from "../http/in-memory-response.js";
import { callOf, type RegistryContext } from "./context.js";
import { parseDigest, type Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { digestBytes } from "../oci/hash.js";
import { parseManifest } from "./manifest-document.js";
import { tagInvalid, type Reference } from "./names.js";
import { absolute, digestHeaders, empty } from "./responses.js";
import { checkReferences } from "./manifest-validation.js";
import { HEADERS, baseHeaderList } from "../oci/wire.js";
import type { StoreCall, StoredManifest } from "./stores/types.js";

/** The 404 `MANIFEST_UNKNOWN` of a reference. */
export function manifestUnknown(reference: Reference): RegistryError {
  const detail = reference.kind === "digest" ? { digest: reference.digest.value } : { tag: reference.tag.slice(0, 300) };
  return new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, detail);
}

/** A manifest found by reference, and the extra headers its tag's resolution brought. */
interface Found {
  manifest: StoredManifest;
  tagHeaders: Readonly<Record<string, string>> | undefined;
}

/** Resolve a tag or digest to a stored manifest revision of `name`. */
async function find(ctx: RegistryContext, name: string, reference: Reference, call: StoreCall): Promise<Found> {
  if (reference.kind === "invalidTag") throw manifestUnknown(reference);
  let digest: Digest;
  let tagHeaders: Found["tagHeaders"];
  if (reference.kind === "digest") digest = reference.digest;
  else {
    const tag = await ctx.stores.tags.resolve(name, reference.tag, call);
    if (!tag) throw manifestUnknown(reference);
    digest = tag.digest;
    tagHeaders = tag.headers;
  }
  const manifest = await ctx.stores.manifests.get(name, digest, call);
  if (!manifest) throw manifestUnknown(reference);
  return { manifest, tagHeaders };
}

/** Headers of a revision, built once per stored object (a pulled tag is served many times from one cache entry). */
const builtHeaders = new WeakMap<StoredManifest, [string, string][]>();

/** The GET/HEAD headers of a revision (plus what a wrapper attached to it or to its tag). */
function manifestHeaders({ manifest, tagHeaders }: Found): HeadersInit {
  let headers = builtHeaders.get(manifest);
  if (!headers) {
    const { digest } = manifest;
    headers = [
      ...baseHeaderList,
      ...HEADERS.contentDigest.map((name): [string, string] => [name, digest.value]),
      ["Content-Type", manifest.mediaType],
      ["Content-Length", String(manifest.size)],
      ["ETag", `"${digest.value}"`],
    ];
    if (manifest.headers) headers.push(...Object.entries(manifest.headers));
    builtHeaders.set(manifest, headers);
  }
  if (!tagHeaders) return headers;
  // The tag's outcome (e.g. the pull-through cache's) speaks for the response.
  const merged = new Headers(headers);
  for (const [key, value] of Object.entries(tagHeaders)) merged.set(key, value);
  return merged;
}

/** `GET /v2/<name>/manifests/<reference>`: the stored bytes, as pushed. */
export async function getManifest(ctx: RegistryContext, request: Request, name: string, reference: Reference): Promise<Response> {
  const found = await find(ctx, name, reference, callOf(ctx, request));
  const { manifest } = found;
  if (manifest.bytes) return inMemoryResponse(request, manifest.bytes, { status: 200, headers: manifestHeaders(found) });
  const body = await manifest.body?.();
  if (!body) throw manifestUnknown(reference);
  return new Response(body, { status: 200, headers: manifestHeaders(found) });
}

/** `HEAD /v2/<name>/manifests/<reference>`. */
export async function headManifest(ctx: RegistryContext, request: Request, name: string, reference: Reference): Promise<Response> {
  return new Response(null, { status: 200, headers: manifestHeaders(await find(ctx, name, reference, callOf(ctx, request))) });
}

/**
 * `PUT /v2/<name>/manifests/<reference>`: validate, then store the exact
 * bytes under their digest (with the tag, and the `subject` for referrers).
 */
export async function putManifest(ctx: RegistryContext, request: Request, url: URL, name: string, reference: Reference): Promise<Response> {
  if (reference.kind === "invalidTag") throw tagInvalid(reference.tag);
  const { manifestBytes } = ctx.settings;
  let bytes: Uint8Array;
  try {
    bytes = await readLimited(request, manifestBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new RegistryError("SIZE_INVALID", `manifest exceeds ${manifestBytes} bytes`, 413, { limit: manifestBytes });
    }
    throw new RegistryError("MANIFEST_INVALID", "the manifest body could not be read");
  }
  const query = url.searchParams.get("digest");
  const claimed = reference.kind === "digest" ? reference.digest : query !== null ? parseDigest(query) : undefined;
  const digest = parseDigest(digestBytes(claimed?.algorithm ?? "sha256", bytes));
  if (claimed && claimed.value !== digest.value) {
    throw new RegistryError("DIGEST_INVALID", "provided digest did not match the manifest content", 400, { digest: claimed.value });
  }
  if (reference.kind === "digest" && query !== null && parseDigest(query).value !== digest.value) {
    throw new RegistryError("DIGEST_INVALID", "provided digest did not match the manifest content", 400, { digest: query });
  }
  const manifest = parseManifest(bytes, request.headers.get("content-type"), ctx.settings.manifestMediaTypes);
  const call = callOf(ctx, request);
  await checkReferences(ctx.stores, ctx.settings.validation, name, manifest, call);
  const tag = reference.kind === "tag" ? reference.tag : undefined;
  // Checked again once the revision is stored: a GC that unlinked a blob meanwhile (or removed a child) either
  // sees this revision in its next listing and keeps them, or this check sees them gone (docs/gc.md).
  const confirm = () => checkReferences(ctx.stores, ctx.settings.validation, name, manifest, call);
  await ctx.stores.manifests.put(name, tag === undefined ? { digest, bytes, manifest, confirm } : { digest, bytes, manifest, tag, confirm }, call);

  const headers = digestHeaders(digest.value);
  headers.set("Location", absolute(request, `${ctx.v2}/${name}/manifests/${digest.value}`));
  if (manifest.subject) headers.set("OCI-Subject", manifest.subject.digest.value);
  return empty(201, headers);
}

/**
 * `DELETE /v2/<name>/manifests/<reference>`. By digest: remove the revision,
 * the tags pointing at it and its referrers entry. By tag: remove the tag only
 * (distribution-spec v1.1).
 */
export async function deleteManifest(ctx: RegistryContext, request: Request, name: string, reference: Reference): Promise<Response> {
  if (reference.kind === "invalidTag") throw manifestUnknown(reference);
  const call = callOf(ctx, request);
  if (reference.kind === "tag") {
    await ctx.stores.tags.delete(name, reference.tag, call);
    return empty(202);
  }
  await ctx.stores.manifests.delete(name, reference.digest, call);
  return empty(202, digestHeaders(reference.digest.value));
}
