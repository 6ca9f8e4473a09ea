/**
 * `quota({ namespace glob → bytes })`: a storage limit per namespace (the
 * repositories one glob matches), counting each blob once however many
 * manifests and repositories of the namespace reference it.
 *
 * Usage is never kept as a counter: it is recounted from storage (the
 * catalog, each repository's manifest revisions, what each manifest
 * references), so it always equals a recount, after deletes, garbage
 * collection and crashes alike. What a manifest references and a blob's size
 * never change for a digest, so both are cached by digest; a recount then
 * costs one listing of the catalog and one per repository of the namespace.
 *
 * @module
 */
import type { LogHook } from "../../../http/log.js";
import { silent } from "../../../http/log.js";
import type { StorageDriver } from "../../../storage/driver.js";
import { tryParseDigest, type Digest } from "../../../oci/digest.js";
import { anyGlob } from "../../../util/glob.js";
import { formatBytes } from "../../../util/size.js";
import { blobData, CATALOG_PREFIX, manifestRevision, parseKey, revisionsPrefix } from "./layout.js";
import { storedReferences } from "./manifest-references.js";
import { eachKey, mapLimited, readJson } from "./storage-io.js";
import type { ManifestMeta } from "./layout.js";
import type { PendingWrite, PolicyRefusal, WritePolicy } from "../../policy/write-policy.js";

/** Limits in bytes by namespace glob, e.g. `{ "team-a/*": 10 * 2 ** 30 }`. */
export type QuotaLimits = Readonly<Record<string, number>>;

/** One namespace's usage, as {@link Quota.usage} reports it. */
export interface QuotaUsage {
  /** The namespace glob. */
  namespace: string;
  /** Its limit in bytes. */
  limit: number;
  /** Bytes of the unique blobs (manifests included) its repositories' manifests reference. */
  used: number;
  /** How many unique blobs that is. */
  blobs: number;
  /** Repositories of the namespace holding at least one manifest. */
  repositories: number;
}

/** The quota {@link WritePolicy}, which also reports usage. */
export interface Quota extends WritePolicy {
  /** Recount the usage of every namespace (or of the ones matching `repository`). */
  usage(storage: StorageDriver, repository?: string): Promise<QuotaUsage[]>;
}

/** Options of {@link quota}. */
export interface QuotaOptions {
  /** Receives a `warn` event for a stored manifest that cannot be parsed. */
  log?: LogHook;
}

/** Most digests whose references and sizes are cached. */
const CACHE_ENTRIES = 100_000;

interface Namespace {
  glob: string;
  limit: number;
  matches: (repository: string) => boolean;
}

/**
 * Limit the bytes each namespace's manifests may reference. A repository
 * matched by several globs is under each limit. Refused with 403 `DENIED`, the
 * usage and the limit in the message:
 *
 * - a manifest PUT whose manifest and referenced blobs, those not counted yet,
 *   would take the namespace past its limit (one adding nothing new, such as a
 *   re-tag, always passes);
 * - the completion of a blob upload (and a mount) that alone would, so a push
 *   far too big fails at its first layer that does not fit; the bytes of
 *   blobs no manifest references yet are not usage, so the manifest PUT is
 *   the check that counts. A blob is let through on the namespace's last
 *   count when it is under 5 s old; a refusal is always confirmed by a fresh
 *   recount.
 *
 * Manifest pushes into one namespace are checked and stored one at a time per
 * process, each on a fresh recount.
 *
 * @example
 * ```ts
 * const quotas = quota({ "team-a/*": 10 * 2 ** 30, "*": 100 * 2 ** 30 });
 * createRegistry({ storage, policies: [quotas] });
 * const usage = await quotas.usage(storage); // [{ namespace: "team-a/*", limit, used, blobs, repositories }, …]
 * ```
 */
export function quota(limits: QuotaLimits, options: QuotaOptions = {}): Quota {
  const namespaces: Namespace[] = Object.entries(limits).map(([glob, limit]) => {
    if (!(limit === Infinity || (Number.isSafeInteger(limit) && limit >= 0))) throw new TypeError(`quota for ${glob} must be a whole number of bytes`);
    return { glob, limit, matches: anyGlob([glob]) };
  });
  const counter = new UsageCounter(options.log ?? silent);
  const applying = (repository: string) => namespaces.filter((n) => n.matches(repository));

  return {
    async usage(storage, repository) {
      const chosen = repository === undefined ? namespaces : applying(repository);
      return mapLimited(chosen, 4, async (n) => {
        const counted = await counter.count(storage, n, false);
        return { namespace: n.glob, limit: n.limit, used: sum(counted.blobs), blobs: counted.blobs.size, repositories: counted.repositories };
      });
    },
    async check(write, storage) {
      if (write.action !== "push" && write.action !== "blob") return undefined;
      const adding = write.action === "push"
        ? [{ digest: write.digest, size: write.manifestSize }, ...write.references]
        : [{ digest: write.digest, size: write.size }];
      for (const n of applying(write.repository)) {
        // A blob passes on a recent count; only a refusal, or a manifest, needs a fresh one.
        let over = exceeds(n, await counter.count(storage, n, write.action === "blob"), adding);
        if (over && write.action === "blob") over = exceeds(n, await counter.count(storage, n, false), adding);
        if (over) return refusal(write, n, over.used, over.more);
      }
      return undefined;
    },
    // Manifests only: a blob's check is advisory (the manifest PUT is the one that counts) and need not wait.
    serializeOn: (write) => (write.action === "push" ? applying(write.repository).map((n) => `quota ${n.glob}`) : []),
  };
}

/** The usage and what `adding` adds to it when that passes the limit; `undefined` when it fits or adds nothing. */
function exceeds(n: Namespace, counted: Counted, adding: readonly { digest: string; size: number }[]): { used: number; more: number } | undefined {
  const added = new Map<string, number>();
  for (const b of adding) if (!counted.blobs.has(b.digest)) added.set(b.digest, b.size);
  const used = sum(counted.blobs);
  const more = sum(added);
  return more > 0 && used + more > n.limit ? { used, more } : undefined;
}

function refusal(write: PendingWrite, n: Namespace, used: number, more: number): PolicyRefusal {
  const what = write.action === "push" ? "this manifest" : "this blob";
  return {
    message: `quota exceeded for ${n.glob}: ${what} adds ${formatBytes(more)} to ${formatBytes(used)} used of ${formatBytes(n.limit)}`,
    detail: { policy: "quota", namespace: n.glob, repository: write.repository, used, adding: more, limit: n.limit },
  };
}

function sum(sizes: Map<string, number>): number {
  let total = 0;
  for (const size of sizes.values()) total += size;
  return total;
}

/** What a recount found. */
interface Counted {
  /** Unique blobs, digest → size. */
  blobs: Map<string, number>;
  /** Repositories holding a manifest. */
  repositories: number;
}

/** How long a blob check may use the last count of its namespace. */
const RECENT_MS = 5000;

/** A cache of what is fixed for a digest, the recount over it, and each namespace's last count (for blob checks). */
class UsageCounter {
  readonly #log: LogHook;
  readonly #recent = new Map<string, { at: number; counted: Counted }>();
  /** Manifest digest → its own size and the blobs it references. */
  readonly #manifests = new Map<string, { size: number; blobs: string[] }>();
  /** Blob digest → stored size (absent: not stored). */
  readonly #sizes = new Map<string, number | undefined>();

  constructor(log: LogHook) {
    this.#log = log;
  }

  /** The count of namespace `n`: a fresh recount, or with `recentOk` the last one when younger than {@link RECENT_MS}. */
  async count(storage: StorageDriver, n: Namespace, recentOk: boolean): Promise<Counted> {
    const last = this.#recent.get(n.glob);
    if (recentOk && last && Date.now() - last.at < RECENT_MS) return last.counted;
    const counted = await this.#recount(storage, n.matches);
    this.#recent.set(n.glob, { at: Date.now(), counted });
    return counted;
  }

  /** The unique blobs (digest → size) the manifests of the matching repositories reference, and how many repositories hold one. */
  async #recount(storage: StorageDriver, matches: (repository: string) => boolean): Promise<Counted> {
    const names: string[] = [];
    for await (const key of eachKey(storage, CATALOG_PREFIX)) {
      const parsed = parseKey(key);
      if (parsed.kind === "catalogEntry" && matches(parsed.name)) names.push(parsed.name);
    }
    const blobs = new Map<string, number>();
    let repositories = 0;
    for (const name of names) {
      const revisions: Digest[] = [];
      for await (const key of eachKey(storage, revisionsPrefix(name))) {
        const parsed = parseKey(key);
        if (parsed.kind === "manifestRevision") revisions.push(parsed.digest);
      }
      if (revisions.length > 0) repositories++;
      const entries = await mapLimited(revisions, 16, (d) => this.#manifest(storage, name, d));
      const referenced = new Set<string>();
      for (const [i, entry] of entries.entries()) {
        if (!entry) continue;
        blobs.set(revisions[i]!.value, entry.size);
        for (const b of entry.blobs) if (!blobs.has(b)) referenced.add(b);
      }
      const sizes = await mapLimited([...referenced], 16, (b) => this.#size(storage, b));
      [...referenced].forEach((b, i) => {
        const size = sizes[i];
        if (size !== undefined) blobs.set(b, size);
      });
    }
    return { blobs, repositories };
  }

  async #manifest(storage: StorageDriver, name: string, digest: Digest): Promise<{ size: number; blobs: string[] } | undefined> {
    const hit = this.#manifests.get(digest.value);
    if (hit) return hit;
    const meta = await readJson<ManifestMeta>(storage, manifestRevision(name, digest)).catch(() => undefined);
    if (!meta) return undefined;
    const refs = await storedReferences(storage, digest, this.#log);
    const entry = { size: meta.size, blobs: refs?.blobs ?? [] };
    remember(this.#manifests, digest.value, entry);
    return entry;
  }

  async #size(storage: StorageDriver, value: string): Promise<number | undefined> {
    if (this.#sizes.has(value)) return this.#sizes.get(value);
    const digest = tryParseDigest(value);
    const size = digest ? (await storage.stat(blobData(digest)))?.size : undefined;
    // A missing blob is not cached: it may be pushed later.
    if (size !== undefined) remember(this.#sizes, value, size);
    return size;
  }
}

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.set(key, value);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
}
