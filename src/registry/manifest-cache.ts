/**
 * The manifest cache as a store wrapper, just above the base stores: a
 * per-process cache of what a manifest GET/HEAD reads, tag → digest and
 * (repository, digest) → revision with its bytes.
 *
 * Every hit is revalidated by the store below: the cached answer goes down as
 * `known`, and the base store, with one `stat` of the object it came from
 * (the tag link, the revision's metadata), hands it back unchanged while that
 * object still has the same size and modification time. So a tag moved, or a
 * manifest deleted, by another process sharing the storage or by garbage
 * collection is seen at once, as without the cache (rule 5), and a GET by tag
 * costs two stats instead of reading three objects. Entries are also dropped
 * after `maxAgeMs` (60 s), a bound for the one case a stat cannot see: an
 * object rewritten with the same size within the same millisecond. Memory is
 * bounded by entry count and total cached bytes.
 *
 * @module
 */
import type { ResolvedTag, StoreWrapper, StoredManifest } from "./stores/types.js";

const MAX_TAGS = 10_000;
const MAX_REVISIONS = 2_000;
/** Manifests larger than this are not cached (they are read from storage each time). */
export const MAX_CACHED_MANIFEST = 256 * 1024;
const MAX_CACHED_BYTES = 16 * 1024 * 1024;

interface Entry<T> {
  value: T;
  until: number;
}

/**
 * The map key of two parts joined by `separator`, the last one made kept:
 * the next GET of the same manifest passes the same key string, whose hash
 * V8 keeps, instead of a new one it hashes again (2 % of a GET's CPU).
 */
class KeyOf {
  #first = "";
  #second = "";
  /** The key of ("", ""), so that the first call finds it or makes its own. */
  #key: string;
  constructor(readonly separator: string) {
    this.#key = separator;
  }

  of(first: string, second: string): string {
    if (first !== this.#first || second !== this.#second) {
      this.#first = first;
      this.#second = second;
      this.#key = `${first}${this.separator}${second}`;
    }
    return this.#key;
  }
}

/** The entries; each is only a candidate the store below confirms (see the module comment). */
export class ManifestCache {
  readonly #tags = new Map<string, Entry<ResolvedTag>>();
  readonly #revisions = new Map<string, Entry<StoredManifest>>();
  readonly #tagKey = new KeyOf(":");
  readonly #revisionKey = new KeyOf("@");
  #bytes = 0;

  constructor(
    readonly maxAgeMs = 60_000,
    readonly now: () => number = Date.now,
  ) {}

  /** The cached resolution of a tag, if younger than `maxAgeMs`. */
  tag(name: string, tag: string): ResolvedTag | undefined {
    return this.#get(this.#tags, this.#tagKey.of(name, tag));
  }

  setTag(name: string, tag: string, resolved: ResolvedTag): void {
    const key = this.#tagKey.of(name, tag);
    this.#tags.delete(key);
    this.#tags.set(key, this.#entry(resolved));
    if (this.#tags.size > MAX_TAGS) this.#tags.delete(this.#tags.keys().next().value!);
  }

  /** Forget a tag (it is gone below). */
  dropTag(name: string, tag: string): void {
    this.#tags.delete(this.#tagKey.of(name, tag));
  }

  /** The cached revision, if younger than `maxAgeMs`. */
  revision(name: string, digest: string): StoredManifest | undefined {
    return this.#get(this.#revisions, this.#revisionKey.of(name, digest));
  }

  /** Keep a revision read with its bytes (larger ones and those without bytes are not kept). */
  setRevision(name: string, revision: StoredManifest): void {
    const key = this.#revisionKey.of(name, revision.digest.value);
    this.#delete(this.#revisions, key);
    if (!revision.bytes || revision.bytes.byteLength > MAX_CACHED_MANIFEST) return;
    this.#bytes += revision.bytes.byteLength;
    this.#revisions.set(key, this.#entry(revision));
    for (const k of this.#revisions.keys()) {
      if (this.#revisions.size <= MAX_REVISIONS && this.#bytes <= MAX_CACHED_BYTES) break;
      this.#delete(this.#revisions, k);
    }
  }

  /** Forget a revision (it is gone below). */
  dropRevision(name: string, digest: string): void {
    this.#delete(this.#revisions, this.#revisionKey.of(name, digest));
  }

  #entry<T>(value: T): Entry<T> {
    return { value, until: this.now() + this.maxAgeMs };
  }

  #get<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    const hit = map.get(key);
    if (!hit) return undefined;
    if (this.now() >= hit.until) {
      this.#delete(map, key);
      return undefined;
    }
    return hit.value;
  }

  #delete<T>(map: Map<string, Entry<T>>, key: string): void {
    const old = map.get(key);
    if (!old) return;
    map.delete(key);
    if ((map as Map<string, unknown>) === this.#revisions) this.#bytes -= (old.value as StoredManifest).bytes?.byteLength ?? 0;
  }
}

/** The manifest cache wrapper (one cache per registry). */
export function manifestCacheStores(cache = new ManifestCache()): StoreWrapper {
  return (below) => ({
    ...below,
    tags: {
      ...below.tags,
      async resolve(name, tag, call) {
        const known = cache.tag(name, tag);
        const resolved = await below.tags.resolve(name, tag, call, known);
        if (resolved === undefined) {
          if (known) cache.dropTag(name, tag);
        } else if (resolved !== known) cache.setTag(name, tag, resolved);
        return resolved;
      },
      // A write through this registry forgets the entry at once: a link rewritten with the same size within the
      // same millisecond (memory storage, a tag moved right after it was read) has the version it had.
      async set(name, tag, digest, call) {
        cache.dropTag(name, tag);
        await below.tags.set(name, tag, digest, call);
        cache.dropTag(name, tag);
      },
      async delete(name, tag, call) {
        cache.dropTag(name, tag);
        try {
          return await below.tags.delete(name, tag, call);
        } finally {
          cache.dropTag(name, tag);
        }
      },
    },
    manifests: {
      ...below.manifests,
      async get(name, digest, call) {
        const known = cache.revision(name, digest.value);
        const manifest = await below.manifests.get(name, digest, call, known);
        if (manifest === undefined) {
          if (known) cache.dropRevision(name, digest.value);
        } else if (manifest !== known) cache.setRevision(name, manifest);
        return manifest;
      },
      async put(name, write, call) {
        if (write.tag !== undefined) cache.dropTag(name, write.tag);
        try {
          return await below.manifests.put(name, write, call);
        } finally {
          if (write.tag !== undefined) cache.dropTag(name, write.tag);
        }
      },
      async delete(name, digest, call) {
        cache.dropRevision(name, digest.value);
        const deleted = await below.manifests.delete(name, digest, call);
        cache.dropRevision(name, digest.value);
        for (const tag of deleted.untagged) cache.dropTag(name, tag);
        return deleted;
      },
    },
  });
}
