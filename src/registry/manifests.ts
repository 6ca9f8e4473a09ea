/**
 * Manifest GET, HEAD, PUT and DELETE, by tag or digest. A manifest is stored
 * under the digest of its exact bytes and served back byte for byte, whatever
 * the `Accept` header says (no conversion).
 *
 * @module
 */
import { BodyTooLargeError, readLimited } from "../http/body.js";
import { inMemoryResponse } from "../http/in-memory-response.js";
import type { RegistryContext } from "./context.js";
import { parseDigest, tryParseDigest, type Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { digestBytes } from "../oci/hash.js";
import { blobData, layerLink, manifestRevision, parseKey, referrer, tagLink, tagsPrefix, type ManifestMeta } from "./layout.js";
import { MAX_CACHED_MANIFEST, type CachedRevision } from "./manifest-cache.js";
import { parseManifest, type ParsedManifest } from "./manifest-document.js";
import { tagInvalid, type Reference } from "./names.js";
import { absolute, digestHeaders, empty } from "./responses.js";
import { eachKey, ensureRepository, exists, mapLimited, readJson, readSmall, readText, writeJson, writeText } from "./storage-io.js";
import { CHECK_CONCURRENCY, checkReferences } from "./manifest-validation.js";
import { HEADERS, baseHeaderList, baseHeaders } from "../oci/wire.js";
import { emitEvent, emitOn, eventReferences, listening, manifestTarget, pullTarget, repositoryCreated, repositoryEmptied, storedReferences, whenRecorded } from "./events.js";
import { checkedCommit, type ManifestPush, type PendingWrite } from "./policy/write-policy.js";
import { forgetIfEmpty } from "./repository-delete.js";

/** The 404 `MANIFEST_UNKNOWN` of a reference. */
export function manifestUnknown(reference: Reference): RegistryError {
  const detail = reference.kind === "digest" ? { digest: reference.digest.value } : { tag: reference.tag.slice(0, 300) };
  return new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, detail);
}

interface Resolved {
  digest: Digest;
  meta: ManifestMeta;
  /** The manifest's bytes, when they came from (or went into) the manifest cache. */
  bytes?: Uint8Array;
  /** The cache entry, which keeps the response headers once built. */
  cached?: CachedRevision;
}

/**
 * Resolve a tag or digest to a stored manifest revision of `name`. Goes
 * through the manifest cache, whose hits are checked with one stat each
 * against the tag link and the revision (see manifest-cache.ts).
 */
async function resolve(ctx: RegistryContext, name: string, reference: Reference): Promise<Resolved> {
  if (reference.kind === "invalidTag") throw manifestUnknown(reference);
  const cache = ctx.manifests;
  let digest: Digest | undefined;
  if (reference.kind === "digest") digest = reference.digest;
  else {
    const key = tagLink(name, reference.tag);
    const info = await ctx.storage.stat(key);
    if (!info) throw manifestUnknown(reference);
    digest = cache.tag(name, reference.tag, info);
    if (!digest) {
      const linked = await readText(ctx.storage, key);
      digest = linked === undefined ? undefined : tryParseDigest(linked.trim());
      if (digest) cache.setTag(name, reference.tag, digest, info);
    }
  }
  if (!digest) throw manifestUnknown(reference);
  const key = manifestRevision(name, digest);
  const info = await ctx.storage.stat(key);
  if (!info) throw manifestUnknown(reference);
  const hit = cache.revision(name, digest, info);
  if (hit) return { digest, meta: hit.meta, bytes: hit.bytes, cached: hit };
  const meta = await readJson<ManifestMeta>(ctx.storage, key);
  if (!meta) throw manifestUnknown(reference);
  if (meta.size <= MAX_CACHED_MANIFEST) {
    const bytes = await readSmall(ctx.storage, blobData(digest), MAX_CACHED_MANIFEST);
    if (!bytes) throw manifestUnknown(reference);
    const cached: CachedRevision = { meta, bytes };
    cache.setRevision(name, digest, cached, info);
    return { digest, meta, bytes, cached };
  }
  return { digest, meta };
}

/** The GET/HEAD headers of a revision; kept in its cache entry (a pulled tag is served many times). */
function manifestHeaders({ digest, meta, cached }: Resolved): HeadersInit {
  if (cached?.headers) return cached.headers as [string, string][];
  const headers: [string, string][] = [
    ...baseHeaderList,
    ...HEADERS.contentDigest.map((name): [string, string] => [name, digest.value]),
    ["Content-Type", meta.mediaType],
    ["Content-Length", String(meta.size)],
    ["ETag", `"${digest.value}"`],
  ];
  if (cached) cached.headers = headers;
  return headers;
}

/** `GET /v2/<name>/manifests/<reference>`: the stored bytes, as pushed. */
export async function getManifest(ctx: RegistryContext, request: Request, name: string, reference: Reference): Promise<Response> {
  const resolved = await resolve(ctx, name, reference);
  const tag = reference.kind === "tag" ? reference.tag : undefined;
  const recorded = listening(ctx) ? whenRecorded(emitOn(ctx, request, "pull", resolved.cached ? pullTarget(ctx, request, name, resolved.digest.value, resolved.cached, tag) : await uncachedPullTarget(ctx, request, name, resolved, tag))) : undefined;
  if (recorded) await recorded;
  if (resolved.bytes) return inMemoryResponse(request, resolved.bytes, { status: 200, headers: manifestHeaders(resolved) });
  const body = await ctx.storage.read(blobData(resolved.digest));
  if (!body) throw manifestUnknown(reference);
  return new Response(body, { status: 200, headers: manifestHeaders(resolved) });
}

/**
 * The pull target of a revision too large for the manifest cache: its bytes
 * are read whole for the event's `references` (a manifest has a size limit)
 * and kept in `resolved`, so the GET answers from them instead of reading
 * the manifest a second time.
 */
async function uncachedPullTarget(ctx: RegistryContext, request: Request, name: string, resolved: Resolved, tag: string | undefined) {
  const { digest, meta } = resolved;
  resolved.bytes ??= await readSmall(ctx.storage, blobData(digest), Math.max(meta.size, ctx.manifestBytes));
  const references = resolved.bytes === undefined ? undefined : storedReferences(ctx, resolved.bytes, meta.mediaType);
  return manifestTarget(ctx, request, name, digest.value, meta.mediaType, meta.size, tag, references);
}

/** `HEAD /v2/<name>/manifests/<reference>`. */
export async function headManifest(ctx: RegistryContext, name: string, reference: Reference): Promise<Response> {
  return new Response(null, { status: 200, headers: manifestHeaders(await resolve(ctx, name, reference)) });
}

/**
 * `PUT /v2/<name>/manifests/<reference>`: validate, store the exact bytes under
 * their digest, point the tag at it, index its `subject` for referrers.
 */
export async function putManifest(ctx: RegistryContext, request: Request, url: URL, name: string, reference: Reference): Promise<Response> {
  if (reference.kind === "invalidTag") throw tagInvalid(reference.tag);
  let bytes: Uint8Array;
  try {
    bytes = await readLimited(request, ctx.manifestBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new RegistryError("SIZE_INVALID", `manifest exceeds ${ctx.manifestBytes} bytes`, 413, { limit: ctx.manifestBytes });
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
  const manifest = parseManifest(bytes, request.headers.get("content-type"), ctx.manifestMediaTypes);
  await checkReferences(ctx, name, manifest);

  const tag = reference.kind === "tag" ? reference.tag : undefined;
  const push = () => describePush(ctx, request, name, digest, bytes.byteLength, manifest, tag);
  // Checked again once the revision is stored: a GC that unlinked a blob meanwhile (or removed a child) either
  // sees this revision in its next listing and keeps them, or this check sees them gone (docs/gc.md).
  const confirm = () => checkReferences(ctx, name, manifest);
  const created = await checkedCommit(ctx.policy, ctx.storage, push, () => storeManifest(ctx, name, digest, bytes, manifest, tag, confirm)).catch(async (error: unknown) => {
    // A refused push leaves no repository without a manifest in the catalog (its blobs were let in before).
    if (error instanceof RegistryError && error.code === "DENIED") await forgetIfEmpty(ctx.storage, name);
    throw error;
  });
  await repositoryCreated(ctx, request, name, created);
  await emitEvent(ctx, request, "push", () => manifestTarget(ctx, request, name, digest.value, manifest.mediaType, bytes.byteLength, tag, eventReferences(manifest)));

  const headers = digestHeaders(digest.value);
  headers.set("Location", absolute(request, `${ctx.v2}/${name}/manifests/${digest.value}`));
  if (manifest.subject) headers.set("OCI-Subject", manifest.subject.digest.value);
  return empty(201, headers);
}

/** The push as write policies see it: what the tag points at now, and the stored size of each reference. */
async function describePush(ctx: RegistryContext, request: Request, name: string, digest: Digest, size: number, manifest: ParsedManifest, tag: string | undefined): Promise<ManifestPush> {
  const replaces = tag === undefined ? undefined : (await readText(ctx.storage, tagLink(name, tag)))?.trim() || undefined;
  const unique = new Map([...manifest.blobs, ...manifest.manifests].map((d) => [d.digest.value, d.digest]));
  const sizes = await mapLimited([...unique.values()], CHECK_CONCURRENCY, async (d) => (await ctx.storage.stat(blobData(d)))?.size ?? 0);
  const references = [...unique.keys()].map((value, i) => ({ digest: value, size: sizes[i] ?? 0 }));
  return {
    action: "push", repository: name, tag, digest: digest.value, replaces, mediaType: manifest.mediaType, manifestSize: size,
    references, referencedBytes: references.reduce((total, r) => total + r.size, 0), caller: ctx.callerOf(request),
  };
}

/**
 * Store a checked manifest of `name`: its bytes under `digest`, its revision,
 * its `subject` in the referrers index, then `tag` when given. Used by a PUT
 * and by the pull-through cache. `confirm` runs once the revision is stored,
 * before anything else: when it throws, a revision this call created is
 * removed and the error propagates. Resolves to whether this created the
 * repository.
 */
export async function storeManifest(ctx: RegistryContext, name: string, digest: Digest, bytes: Uint8Array, manifest: ParsedManifest, tag?: string, confirm?: () => Promise<void>): Promise<boolean> {
  const revision = manifestRevision(name, digest);
  // Bytes, then revision, then tag: each step is only visible once the one before it is done.
  const [, before] = await Promise.all([ctx.storage.write(blobData(digest), bytes), confirm ? ctx.storage.stat(revision) : undefined]);
  const meta: ManifestMeta = { mediaType: manifest.mediaType, size: bytes.byteLength };
  if (manifest.artifactType !== undefined) meta.artifactType = manifest.artifactType;
  if (manifest.subject) meta.subject = manifest.subject.digest.value;
  await writeJson(ctx.storage, revision, meta);
  try {
    await confirm?.();
  } catch (error) {
    if (!before) await ctx.storage.delete(revision);
    throw error;
  }
  if (manifest.subject) {
    const entry: Record<string, unknown> = { mediaType: manifest.mediaType, digest: digest.value, size: bytes.byteLength };
    if (manifest.artifactType !== undefined) entry.artifactType = manifest.artifactType;
    if (manifest.annotations) entry.annotations = manifest.annotations;
    await writeJson(ctx.storage, referrer(name, manifest.subject.digest, digest), entry);
  }
  if (tag !== undefined) await writeText(ctx.storage, tagLink(name, tag), digest.value);
  return ensureRepository(ctx.storage, name);
}

/**
 * `DELETE /v2/<name>/manifests/<reference>`. By digest: remove the revision,
 * the tags pointing at it and its referrers entry. By tag: remove the tag only
 * (distribution-spec v1.1).
 */
export async function deleteManifest(ctx: RegistryContext, request: Request, name: string, reference: Reference): Promise<Response> {
  if (reference.kind === "invalidTag") throw manifestUnknown(reference);
  const caller = ctx.callerOf(request);
  if (reference.kind === "tag") {
    const { tag } = reference;
    const key = tagLink(name, tag);
    const describe = async (): Promise<PendingWrite> => {
      const digest = (await readText(ctx.storage, key))?.trim();
      if (digest === undefined) throw manifestUnknown(reference);
      return { action: "deleteTag", repository: name, tag, digest, caller };
    };
    if (!ctx.policy && !(await exists(ctx.storage, key))) throw manifestUnknown(reference);
    await checkedCommit(ctx.policy, ctx.storage, describe, () => ctx.storage.delete(key));
    await emitEvent(ctx, request, "delete", () => ({ repository: name, tag }));
    return empty(202);
  }
  const { digest } = reference;
  const meta = await readJson<ManifestMeta>(ctx.storage, manifestRevision(name, digest));
  if (!meta) throw manifestUnknown(reference);
  const tags = await tagsPointingAt(ctx, name, digest);
  const describe = async (): Promise<PendingWrite> => ({ action: "deleteManifest", repository: name, digest: digest.value, tags: (await tagsPointingAt(ctx, name, digest)).map((t) => t.tag), caller });
  const untagged = await checkedCommit(ctx.policy, ctx.storage, describe, async () => {
    const gone: string[] = [];
    for (const { tag, key } of ctx.policy ? await tagsPointingAt(ctx, name, digest) : tags) {
      await ctx.storage.delete(key);
      gone.push(tag);
    }
    const subject = meta.subject === undefined ? undefined : tryParseDigest(meta.subject);
    if (subject) await ctx.storage.delete(referrer(name, subject, digest));
    await ctx.storage.delete(manifestRevision(name, digest));
    return gone;
  });
  const emptied = await forgetIfEmpty(ctx.storage, name);
  await emitEvent(ctx, request, "delete", () => ({ digest: digest.value, repository: name }));
  // Then one per tag that pointed at it, as Distribution does.
  for (const tag of untagged) await emitEvent(ctx, request, "delete", () => ({ repository: name, tag }));
  await repositoryEmptied(ctx, request, name, emptied);
  return empty(202, digestHeaders(digest.value));
}

/** The tags of `name` pointing at `digest` now, with their keys. */
async function tagsPointingAt(ctx: RegistryContext, name: string, digest: Digest): Promise<{ tag: string; key: string }[]> {
  const found: { tag: string; key: string }[] = [];
  for await (const key of eachKey(ctx.storage, tagsPrefix(name))) {
    if ((await readText(ctx.storage, key))?.trim() !== digest.value) continue;
    const parsed = parseKey(key);
    if (parsed.kind === "tagLink") found.push({ tag: parsed.tag, key });
  }
  return found;
}
