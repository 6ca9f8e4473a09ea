/**
 * A per-process cache of what a manifest GET/HEAD reads from storage: tag →
 * digest, and (repository, digest) → metadata and bytes.
 *
 * Every hit is revalidated with one `stat` of the storage object it came from
 * (the tag link, the revision's metadata): a cached entry is used only while
 * that object still exists with the same size and modification time. So a tag
 * moved, or a manifest deleted, by another process sharing the storage or by
 * garbage collection is seen at once, as without the cache (rule 5), and a
 * GET by tag costs two stats instead of reading three objects. Entries are
 * also dropped after `maxAgeMs` (60 s), a bound for the one case a stat cannot
 * see: an object rewritten with the same size within the same millisecond.
 * Memory is bounded by entry count and total cached bytes.
 *
 * @module
 */
import type { EventTarget } from "../events/model.js";
import type { ObjectInfo } from "../storage/driver.js";
import type { Digest } from "../oci/digest.js";
import type { ManifestMeta } from "./layout.js";

export interface CachedRevision {
  meta: ManifestMeta;
  bytes: Uint8Array;
  /** The GET/HEAD response headers, built on first use (they depend only on the revision). */
  headers?: readonly [string, string][];
  /** The target of the last pull event of this revision, frozen: the next pull by the same tag and URL shares it. */
  pullTarget?: Readonly<EventTarget>;
}

const MAX_TAGS = 10_000;
const MAX_REVISIONS = 2_000;
/** Manifests larger than this are not cached (they are read from storage each time). */
export const MAX_CACHED_MANIFEST = 256 * 1024;
const MAX_CACHED_BYTES = 16 * 1024 * 1024;

interface Entry<T> {
  value: T;
  /** The size and modification time (ms) of the storage object the value was read from. */
  size: number;
  modified: number;
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

export class ManifestCache {
  readonly #tags = new Map<string, Entry<Digest>>();
  readonly #revisions = new Map<string, Entry<CachedRevision>>();
  readonly #tagKey = new KeyOf(":");
  readonly #revisionKey = new KeyOf("@");
  #bytes = 0;

  constructor(
    readonly maxAgeMs = 60_000,
    readonly now: () => number = Date.now,
  ) {}

  /** The cached digest of a tag whose link `stat` answered `info` for. */
  tag(name: string, tag: string, info: ObjectInfo): Digest | undefined {
    return this.#get(this.#tags, this.#tagKey.of(name, tag), info);
  }

  setTag(name: string, tag: string, digest: Digest, info: ObjectInfo): void {
    const key = this.#tagKey.of(name, tag);
    this.#tags.delete(key);
    this.#tags.set(key, this.#entry(digest, info));
    if (this.#tags.size > MAX_TAGS) this.#tags.delete(this.#tags.keys().next().value!);
  }

  /** The cached revision whose metadata object `stat` answered `info` for. */
  revision(name: string, digest: Digest, info: ObjectInfo): CachedRevision | undefined {
    return this.#get(this.#revisions, this.#revisionKey.of(name, digest.value), info);
  }

  setRevision(name: string, digest: Digest, revision: CachedRevision, info: ObjectInfo): void {
    if (revision.bytes.byteLength > MAX_CACHED_MANIFEST) return;
    const key = this.#revisionKey.of(name, digest.value);
    this.#delete(this.#revisions, key);
    this.#bytes += revision.bytes.byteLength;
    this.#revisions.set(key, this.#entry(revision, info));
    for (const k of this.#revisions.keys()) {
      if (this.#revisions.size <= MAX_REVISIONS && this.#bytes <= MAX_CACHED_BYTES) break;
      this.#delete(this.#revisions, k);
    }
  }

  #entry<T>(value: T, info: ObjectInfo): Entry<T> {
    return { value, size: info.size, modified: info.modified.getTime(), until: this.now() + this.maxAgeMs };
  }

  #get<T>(map: Map<string, Entry<T>>, key: string, info: ObjectInfo): T | undefined {
    const hit = map.get(key);
    if (!hit) return undefined;
    if (hit.size !== info.size || hit.modified !== info.modified.getTime() || this.now() >= hit.until) {
      this.#delete(map, key);
      return undefined;
    }
    return hit.value;
  }

  #delete<T>(map: Map<string, Entry<T>>, key: string): void {
    const old = map.get(key);
    if (!old) return;
    map.delete(key);
    if ((map as Map<string, unknown>) === this.#revisions) this.#bytes -= (old.value as CachedRevision).bytes.byteLength;
  }
}
