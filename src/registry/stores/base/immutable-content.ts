/**
 * What an immutable tag holds beyond the manifest it points at: that
 * manifest's blobs and, for an index, its child manifests and theirs,
 * recursively. Deleting any of them in the tag's repository would break the
 * tag without touching it, so `immutableTags` refuses those deletes too.
 *
 * @module
 */
import { silent } from "../../../http/log.js";
import type { StorageDriver } from "../../../storage/driver.js";
import { tryParseDigest, type Digest } from "../../../oci/digest.js";
import { parseKey, tagsPrefix } from "./layout.js";
import { storedReferences, type ManifestReferences } from "./manifest-references.js";
import { eachKey, mapLimited, readText } from "./storage-io.js";

/** Most manifests whose references are cached (they never change for a digest). */
const CACHE_ENTRIES = 10_000;

/** Storage round trips in flight at once. */
const CONCURRENCY = 16;

/** The tag (and the manifest it points at) through which `digest` is held. */
export interface Holder {
  tag: string;
  /** The manifest the tag points at. */
  manifest: string;
}

/**
 * Finds the protected tag of a repository whose manifest references a digest,
 * directly or through child manifests. One finder per policy: it caches what
 * each manifest references.
 */
export function contentFinder(protects: (repository: string, tag: string) => boolean) {
  const cache = new Map<string, ManifestReferences | undefined>();
  const references = async (storage: StorageDriver, digest: Digest) => {
    if (cache.has(digest.value)) return cache.get(digest.value);
    const refs = await storedReferences(storage, digest, silent);
    // A manifest whose bytes are missing is not cached: it may be pushed again.
    if (refs) {
      cache.set(digest.value, refs);
      if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    }
    return refs;
  };

  /** The protected tag of `repository` whose content includes `digest` (not counting the tagged manifest itself). */
  return async function holderOf(storage: StorageDriver, repository: string, digest: string): Promise<Holder | undefined> {
    const keys: { tag: string; key: string }[] = [];
    for await (const key of eachKey(storage, tagsPrefix(repository))) {
      const parsed = parseKey(key);
      if (parsed.kind === "tagLink" && protects(repository, parsed.tag)) keys.push({ tag: parsed.tag, key });
    }
    const targets = await mapLimited(keys, CONCURRENCY, async ({ key }) => tryParseDigest((await readText(storage, key))?.trim() ?? ""));
    const seen = new Set<string>();
    for (const [i, root] of targets.entries()) {
      if (!root) continue;
      // Breadth first through the index's children; each manifest is read once over all tags.
      let level: Digest[] = [root];
      while (level.length > 0) {
        const fresh = level.filter((d) => !seen.has(d.value));
        fresh.forEach((d) => seen.add(d.value));
        const refs = await mapLimited(fresh, CONCURRENCY, (d) => references(storage, d));
        const next: Digest[] = [];
        for (const r of refs) {
          if (!r) continue;
          if (r.blobs.includes(digest) || r.children.some((c) => c.value === digest)) return { tag: keys[i]!.tag, manifest: root.value };
          next.push(...r.children);
        }
        level = next;
      }
    }
    return undefined;
  };
}
