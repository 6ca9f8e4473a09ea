/**
 * Manifests and tags of a proxied repository. By digest: served from the
 * stores below, or fetched once and kept for good (a digest never changes).
 * By tag: served from below while the tag is younger than the upstream's ttl
 * (the tag link's modification time is when it was fetched or last
 * confirmed); after that one upstream `HEAD` confirms it, and only a changed
 * digest costs a `GET`. When the upstream fails, a cached tag is served
 * anyway, marked stale.
 *
 * @module
 */
import { parseDigest, type Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { digestBytes } from "../../oci/hash.js";
import { parseManifest } from "../manifest-document.js";
import type { ManifestStore, RegistryStores, StoreCall, TagStore } from "../stores/types.js";
import { outcomeHeaders, upstreamFailure, type CacheOutcome, type PullThroughSettings } from "./common.js";
import type { PullThrough, ResolvedUpstream } from "./options.js";

function unknownTag(tag: string): RegistryError {
  return new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, { tag: tag.slice(0, 300) });
}

function unknownDigest(digest: Digest): RegistryError {
  return new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, { digest: digest.value });
}

/** `tags.resolve` and `manifests.get` of the repositories `pt` covers, over `below`. */
// Over 80 lines: one closure over the stores below and the flights; each step is a short function inside.
export function proxiedManifests(below: RegistryStores, pt: PullThrough, settings: PullThroughSettings): { resolve: TagStore["resolve"]; get: ManifestStore["get"] } {
  /** Run `fn` unless a fetch of `key` is under way in this process, in which case wait for that one. */
  const once = (key: string, fn: () => Promise<void>): Promise<void> => pt.flights.get(key) ?? pt.flights.start(key, fn);

  /**
   * GET the manifest upstream, check it hashes to `expected` (or to the digest
   * the upstream claimed, for a tag), check its document, and store it (and
   * the tag). Nothing is stored when a check fails.
   */
  const fetchAndStore = async (up: ResolvedUpstream, name: string, reference: string, expected: Digest | undefined, call: StoreCall, tag?: string): Promise<void> => {
    let fetched;
    try {
      fetched = await up.upstream.getManifest(up.remoteName, reference);
    } catch (error) {
      throw upstreamFailure(up, error, settings.log, "manifest GET");
    }
    if (!fetched) throw tag !== undefined ? unknownTag(tag) : unknownDigest(expected as Digest);
    if (fetched.bytes.byteLength > settings.manifestBytes) throw badUpstream(up, settings, `manifest exceeds ${settings.manifestBytes} bytes`);
    const claimed = expected ?? (fetched.digest ? tryDigest(fetched.digest) : undefined);
    const digest = parseDigest(digestBytes(claimed?.algorithm ?? "sha256", fetched.bytes));
    if (claimed && claimed.value !== digest.value) throw badUpstream(up, settings, `manifest bytes hash to ${digest.value}, not ${claimed.value}`);
    let manifest;
    try {
      manifest = parseManifest(fetched.bytes, fetched.mediaType, settings.manifestMediaTypes);
    } catch (error) {
      throw badUpstream(up, settings, error instanceof RegistryError ? error.message : "manifest not readable");
    }
    const write = { digest, bytes: fetched.bytes, manifest };
    await below.manifests.put(name, tag === undefined ? write : { ...write, tag }, call);
  };

  /** Ask the upstream what the tag points to; re-link (no GET) when it is a revision already stored. */
  const revalidate = async (up: ResolvedUpstream, name: string, tag: string, before: string, call: StoreCall): Promise<CacheOutcome> => {
    const head = await up.upstream.headManifest(up.remoteName, tag);
    if (!head) throw unknownTag(tag);
    const digest = parseDigest(head.digest);
    if (!(await below.manifests.get(name, digest, call))) {
      await once(`manifest ${name}@${digest.value}`, () => fetchAndStore(up, name, digest.value, digest, call));
    }
    // Rewriting the link, even unchanged, restarts its ttl: its modification time is the last check.
    await below.tags.set(name, tag, digest, call);
    return before === digest.value ? "revalidated" : "stored";
  };

  const resolved = async (name: string, tag: string, call: StoreCall, outcome: CacheOutcome) => {
    const found = await below.tags.resolve(name, tag, call);
    return found && { ...found, headers: outcomeHeaders(outcome) };
  };

  return {
    async resolve(name, tag, call, known) {
      const up = pt.lookup(name);
      if (!up) return below.tags.resolve(name, tag, call, known);
      const local = await below.tags.resolve(name, tag, call);
      if (!local) {
        if (!(await found(once(`tag ${name}:${tag}`, () => fetchAndStore(up, name, tag, undefined, call, tag))))) return undefined;
        return resolved(name, tag, call, "stored");
      }
      if (Date.now() - local.modified < up.ttlMs) return { ...local, headers: outcomeHeaders("hit") };
      // One HEAD however many pulls of the tag arrive at once; the others wait for it.
      let outcome: CacheOutcome = "revalidated";
      const flight = `revalidate ${name}:${tag}`;
      try {
        await (pt.flights.get(flight) ?? pt.flights.start(flight, async () => void (outcome = await revalidate(up, name, tag, local.digest.value, call))));
      } catch (error) {
        if (error instanceof RegistryError && error.code === "MANIFEST_UNKNOWN") return undefined;
        if (error instanceof RegistryError) throw error;
        upstreamFailure(up, error, settings.log, "manifest HEAD");
        return resolved(name, tag, call, "stale");
      }
      return resolved(name, tag, call, outcome);
    },

    async get(name, digest, call, known) {
      const up = pt.lookup(name);
      if (!up) return below.manifests.get(name, digest, call, known);
      const local = await below.manifests.get(name, digest, call);
      if (local) return { ...local, headers: outcomeHeaders("hit") };
      if (!(await found(once(`manifest ${name}@${digest.value}`, () => fetchAndStore(up, name, digest.value, digest, call))))) return undefined;
      const stored = await below.manifests.get(name, digest, call);
      return stored && { ...stored, headers: outcomeHeaders("stored") };
    },
  };
}

/** Whether `fetch` stored the object: false when the upstream does not have it (a missing object reads as `undefined`). */
async function found(fetch: Promise<void>): Promise<boolean> {
  try {
    await fetch;
    return true;
  } catch (error) {
    if (error instanceof RegistryError && error.code === "MANIFEST_UNKNOWN") return false;
    throw error;
  }
}

function tryDigest(value: string): Digest | undefined {
  try {
    return parseDigest(value);
  } catch {
    return undefined;
  }
}

/** The upstream sent something we will not store: 502, and the reason in the log. */
function badUpstream(up: ResolvedUpstream, settings: PullThroughSettings, reason: string): RegistryError {
  settings.log({ level: "warn", msg: "pull-through: upstream manifest refused", prefix: up.prefix, repository: up.remoteName, reason });
  return new RegistryError("UNKNOWN", "the upstream registry sent a manifest that failed verification", 502, { prefix: up.prefix });
}
