/**
 * `quota({ namespace glob → bytes })`: a storage limit per namespace (the
 * repositories one glob matches), counting each blob once however many
 * manifests and repositories of the namespace reference it.
 *
 * Usage is never kept as a counter: it is recounted from storage (one listing
 * of the namespace's repositories: their manifest revisions, what each
 * manifest references, and their blob links), so it always equals a recount,
 * after deletes, garbage collection and crashes alike. What a manifest
 * references and a blob's size never change for a digest, so both are cached
 * by digest; a recount then costs one listing of the keys under the
 * namespace's repositories.
 *
 * @module
 */
import type { LogHook } from "../../../http/log.js";
import { silent } from "../../../http/log.js";
import type { StorageDriver } from "../../../storage/driver.js";
import { tryParseDigest, type Digest } from "../../../oci/digest.js";
import { anyGlob } from "../../../util/glob.js";
import { formatBytes } from "../../../util/size.js";
import { blobData, manifestRevision, parseKey, repositoriesUnder } from "./layout.js";
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
  /** Bytes of the unique blobs its repositories hold: manifests, what they reference, and blobs linked (uploaded or mounted) that no manifest references yet. */
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
 * Limit the bytes each namespace's repositories may hold. A repository
 * matched by several globs is under each limit. Usage counts each unique blob
 * once: manifests, what they reference, and blobs uploaded or mounted into a
 * repository that no manifest references yet (until garbage collection or a
 * blob `DELETE` removes them). Refused with 403 `DENIED`, the usage and the
 * limit in the message:
 *
 * - the completion of a blob upload (and a mount) that would take the
 *   namespace past its limit, so a push that does not fit fails at its first
 *   blob that does not;
 * - a manifest PUT whose manifest and referenced blobs, those not counted yet,
 *   would (one adding nothing new, such as a re-tag, always passes).
 *
 * A blob is checked on the namespace's last count when that is under 5 s old,
 * plus the blobs this process let through since (until a recount sees their
 * links, at most a minute), so parallel uploads cannot all pass on one
 * count; a refusal is always confirmed by a fresh recount. Manifest pushes
 * into one namespace are checked and stored one at a time per process, each
 * on a fresh recount.
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
      const chosen = applying(write.repository);
      for (const n of chosen) {
        // A blob passes on a recent count; only a refusal, or a manifest, needs a fresh one.
        let over = exceeds(n, await counter.count(storage, n, write.action === "blob"), counter.reserved(n), adding);
        if (over && write.action === "blob") over = exceeds(n, await counter.count(storage, n, false), counter.reserved(n), adding);
        if (over) return refusal(write, n, over.used, over.more);
      }
      // No await since the last check: the next blob's check sees this one.
      if (write.action === "blob") for (const n of chosen) counter.reserve(n, write.digest, write.size);
      return undefined;
    },
    // Manifests only: a blob's check is advisory (the manifest PUT is the one that counts) and need not wait.
    serializeOn: (write) => (write.action === "push" ? applying(write.repository).map((n) => `quota ${n.glob}`) : []),
  };
}

/**
 * The usage (counted, and reserved blobs not counted yet) and what `adding`
 * adds to it when that passes the limit; `undefined` when it fits or adds nothing.
 */
function exceeds(n: Namespace, counted: Counted, reserved: ReadonlyMap<string, number>, adding: readonly { digest: string; size: number }[]): { used: number; more: number } | undefined {
  const added = new Map<string, number>();
  for (const b of adding) if (!counted.blobs.has(b.digest) && !reserved.has(b.digest)) added.set(b.digest, b.size);
  let used = sum(counted.blobs);
  for (const [digest, size] of reserved) if (!counted.blobs.has(digest)) used += size;
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

/** Longest a blob let through counts on its own (a recount that sees its link ends it sooner). */
const RESERVED_MS = 60_000;

/** A cache of what is fixed for a digest, the recount over it, and each namespace's last count (for blob checks). */
class UsageCounter {
  readonly #log: LogHook;
  readonly #recent = new Map<string, { at: number; counted: Counted }>();
  /** Namespace glob → blobs let through lately: digest → size and until when it counts. */
  readonly #reserved = new Map<string, Map<string, { size: number; until: number }>>();
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
    const counted = await this.#recount(storage, n);
    this.#recent.set(n.glob, { at: Date.now(), counted });
    // Storage shows these now: they count from there (and stop counting when GC or a delete takes them).
    const held = this.#reserved.get(n.glob);
    for (const digest of held?.keys() ?? []) if (counted.blobs.has(digest)) held!.delete(digest);
    return counted;
  }

  /** The blobs this process let through for `n` lately (expired ones dropped). */
  reserved(n: Namespace): ReadonlyMap<string, number> {
    const held = this.#reserved.get(n.glob);
    const now = Date.now();
    const sizes = new Map<string, number>();
    for (const [digest, { size, until }] of held ?? []) {
      if (until < now) held!.delete(digest);
      else sizes.set(digest, size);
    }
    return sizes;
  }

  /** Count blob `digest` for `n` until a recount is sure to see it. */
  reserve(n: Namespace, digest: string, size: number): void {
    let held = this.#reserved.get(n.glob);
    if (!held) this.#reserved.set(n.glob, (held = new Map()));
    held.set(digest, { size, until: Date.now() + RESERVED_MS });
  }

  /**
   * The unique blobs (digest → size) the matching repositories hold (their
   * manifests, what those reference, their blob links), and how many
   * repositories hold a manifest. One listing of the keys under the
   * namespace's repositories, not the catalog: a repository a refused push
   * left out of the catalog still holds its blobs.
   */
  async #recount(storage: StorageDriver, n: Namespace): Promise<Counted> {
    const found = new Map<string, { revisions: Digest[]; links: string[] }>();
    for await (const key of eachKey(storage, repositoriesUnder(literalFolder(n.glob)))) {
      const parsed = parseKey(key);
      if ((parsed.kind !== "manifestRevision" && parsed.kind !== "layerLink") || !n.matches(parsed.name)) continue;
      let repo = found.get(parsed.name);
      if (!repo) found.set(parsed.name, (repo = { revisions: [], links: [] }));
      if (parsed.kind === "manifestRevision") repo.revisions.push(parsed.digest);
      else repo.links.push(parsed.digest.value);
    }
    const blobs = new Map<string, number>();
    let repositories = 0;
    for (const [name, { revisions, links }] of found) {
      if (revisions.length > 0) repositories++;
      const entries = await mapLimited(revisions, 16, (d) => this.#manifest(storage, name, d));
      const referenced = new Set<string>(links.filter((b) => !blobs.has(b)));
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

/** The folder of repository names every name `glob` matches lies in: `team/` for `team/*`, `""` for `*` or `t*`. */
function literalFolder(glob: string): string {
  const wild = glob.search(/[*?]/);
  const literal = wild === -1 ? glob : glob.slice(0, wild);
  return literal.slice(0, literal.lastIndexOf("/") + 1);
}

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.set(key, value);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
}
