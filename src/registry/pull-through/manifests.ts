/**
 * Manifest GET and HEAD of a proxied repository. By digest: served from
 * storage, or fetched once and kept for good (a digest never changes). By tag:
 * served from storage while the tag is younger than the upstream's ttl (the
 * tag link's modification time is when it was fetched or last confirmed);
 * after that one upstream `HEAD` confirms it, and only a changed digest costs
 * a `GET`. When the upstream fails, a cached tag is served anyway, marked stale.
 *
 * @module
 */
import type { RegistryContext } from "../context.js";
import { parseDigest, type Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { digestBytes } from "../../oci/hash.js";
import { manifestRevision, tagLink } from "../layout.js";
import { parseManifest } from "../manifest-document.js";
import { getManifest, headManifest, manifestUnknown, storeManifest } from "../manifests.js";
import type { Reference } from "../names.js";
import { exists, readText, writeText } from "../storage-io.js";
import { marked, upstreamFailure, type CacheOutcome } from "./common.js";
import type { PullThrough, ResolvedUpstream } from "./options.js";

/** `GET`/`HEAD /v2/<name>/manifests/<reference>` of a repository `up` covers. */
export async function pullManifest(ctx: RegistryContext, pt: PullThrough, up: ResolvedUpstream, request: Request, name: string, reference: Reference): Promise<Response> {
  if (reference.kind === "invalidTag") throw manifestUnknown(reference);
  if (reference.kind === "digest") {
    let outcome: CacheOutcome = "hit";
    if (!(await exists(ctx.storage, manifestRevision(name, reference.digest)))) {
      await once(pt, `manifest ${name}@${reference.digest.value}`, () => fetchAndStore(ctx, up, name, reference.digest.value, reference.digest));
      outcome = "stored";
    }
    return serve(ctx, request, name, reference, outcome);
  }
  const key = tagLink(name, reference.tag);
  const info = await ctx.storage.stat(key);
  if (!info) {
    await once(pt, `tag ${name}:${reference.tag}`, () => fetchAndStore(ctx, up, name, reference.tag, undefined, reference.tag));
    return serve(ctx, request, name, reference, "stored");
  }
  if (Date.now() - info.modified.getTime() < up.ttlMs) return serve(ctx, request, name, reference, "hit");
  // One HEAD however many pulls of the tag arrive at once; the others wait for it.
  let outcome: CacheOutcome = "revalidated";
  const flight = `revalidate ${name}:${reference.tag}`;
  try {
    await (pt.flights.get(flight) ?? pt.flights.start(flight, async () => void (outcome = await revalidate(ctx, pt, up, name, reference.tag))));
  } catch (error) {
    if (error instanceof RegistryError) throw error;
    upstreamFailure(up, error, ctx.log, "manifest HEAD");
    return serve(ctx, request, name, reference, "stale");
  }
  return serve(ctx, request, name, reference, outcome);
}

/** Ask the upstream what the tag points to; re-link (no GET) when it is a revision already stored. */
async function revalidate(ctx: RegistryContext, pt: PullThrough, up: ResolvedUpstream, name: string, tag: string): Promise<CacheOutcome> {
  const head = await up.upstream.headManifest(up.remoteName, tag);
  if (!head) throw manifestUnknown({ kind: "tag", tag });
  const digest = parseDigest(head.digest);
  const before = (await readText(ctx.storage, tagLink(name, tag)))?.trim();
  if (!(await exists(ctx.storage, manifestRevision(name, digest)))) {
    await once(pt, `manifest ${name}@${digest.value}`, () => fetchAndStore(ctx, up, name, digest.value, digest));
  }
  // Rewriting the link, even unchanged, restarts its ttl: its modification time is the last check.
  await writeText(ctx.storage, tagLink(name, tag), digest.value);
  return before === digest.value ? "revalidated" : "stored";
}

/** Run `fn` unless a fetch of `key` is under way in this process, in which case wait for that one. */
async function once(pt: PullThrough, key: string, fn: () => Promise<void>): Promise<void> {
  const running = pt.flights.get(key);
  if (running) return running;
  return pt.flights.start(key, fn);
}

/**
 * GET the manifest upstream, check it hashes to `expected` (or to the digest
 * the upstream claimed, for a tag), check its document, and store it (and the
 * tag). Nothing is stored when a check fails.
 */
async function fetchAndStore(ctx: RegistryContext, up: ResolvedUpstream, name: string, reference: string, expected: Digest | undefined, tag?: string): Promise<void> {
  let fetched;
  try {
    fetched = await up.upstream.getManifest(up.remoteName, reference);
  } catch (error) {
    throw upstreamFailure(up, error, ctx.log, "manifest GET");
  }
  if (!fetched) throw tag !== undefined ? manifestUnknown({ kind: "tag", tag }) : manifestUnknown({ kind: "digest", digest: expected as Digest });
  if (fetched.bytes.byteLength > ctx.manifestBytes) throw badUpstream(up, ctx, `manifest exceeds ${ctx.manifestBytes} bytes`);
  const claimed = expected ?? (fetched.digest ? tryDigest(fetched.digest) : undefined);
  const digest = parseDigest(digestBytes(claimed?.algorithm ?? "sha256", fetched.bytes));
  if (claimed && claimed.value !== digest.value) {
    throw badUpstream(up, ctx, `manifest bytes hash to ${digest.value}, not ${claimed.value}`);
  }
  let manifest;
  try {
    manifest = parseManifest(fetched.bytes, fetched.mediaType, ctx.manifestMediaTypes);
  } catch (error) {
    throw badUpstream(up, ctx, error instanceof RegistryError ? error.message : "manifest not readable");
  }
  await storeManifest(ctx, name, digest, fetched.bytes, manifest, tag);
}

function tryDigest(value: string): Digest | undefined {
  try {
    return parseDigest(value);
  } catch {
    return undefined;
  }
}

/** The upstream sent something we will not store: 502, and the reason in the log. */
function badUpstream(up: ResolvedUpstream, ctx: RegistryContext, reason: string): RegistryError {
  ctx.log({ level: "warn", msg: "pull-through: upstream manifest refused", prefix: up.prefix, repository: up.remoteName, reason });
  return new RegistryError("UNKNOWN", "the upstream registry sent a manifest that failed verification", 502, { prefix: up.prefix });
}

async function serve(ctx: RegistryContext, request: Request, name: string, reference: Reference, outcome: CacheOutcome): Promise<Response> {
  const response = request.method.toUpperCase() === "HEAD" ? await headManifest(ctx, name, reference) : await getManifest(ctx, request, name, reference);
  return marked(response, outcome);
}
