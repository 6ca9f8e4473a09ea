/**
 * Garbage collection: a mark-and-sweep of the blobs no manifest references,
 * optionally of the manifests no tag references, and of abandoned uploads.
 * Safe to run while the registry keeps serving pushes (see docs/gc.md):
 *
 * - **Mark.** Every repository's manifest revisions are roots (with
 *   `removeUntagged`: only tagged ones, ones younger than the grace period, the
 *   children of kept indexes and the referrers of kept subjects). Each kept
 *   manifest marks its own bytes, its config and layers (`blobs` of an
 *   artifact manifest) and, for an index, its children, recursively.
 * - **Sweep manifests** (`removeUntagged` only): the referrers entry, then the
 *   revision, as `DELETE` by digest does. Tags are read again just before and
 *   just after; a revision a concurrent push tagged meanwhile is kept (or put
 *   back).
 * - **Mark again.** Revisions that appeared while the sweep ran are marked, so
 *   a push that finished meanwhile keeps its blobs.
 * - **Sweep blobs.** A blob whose data or any repository link is younger than
 *   the grace period is never deleted: that covers blobs uploaded or mounted
 *   for a manifest that is not pushed yet. Otherwise the repository links go
 *   first (the blob stops being visible, so a racing manifest PUT gets
 *   `MANIFEST_BLOB_UNKNOWN` rather than a dangling reference), then the data.
 * - **Uploads** whose object was last written more than the upload maximum
 *   age ago are removed; younger ones are never touched.
 *
 * @module
 */
import { silent, type LogHook } from "../http/log.js";
import { checked, type StorageDriver } from "../storage/driver.js";
import { tryParseDigest, type Digest } from "../oci/digest.js";
import { blobData, layerLink, manifestRevision, referrer, tagsPrefix, uploadDir, type ManifestMeta } from "./layout.js";
import { eachKey, mapLimited, readJson, readSmall, readText, writeJson } from "./storage-io.js";

/** Options of {@link collectGarbage}. */
export interface GcOptions {
  /** Report what would be removed, remove nothing. Default false. */
  dryRun?: boolean;
  /** Also remove manifests no tag references (directly or as an index child or a referrer). Default false. */
  removeUntagged?: boolean;
  /** Blobs, links and manifests younger than this are never removed. Default 3600 (one hour). */
  gracePeriodSeconds?: number;
  /** Uploads whose object was last written longer ago than this are removed. Default 7 days, the registry's default. */
  uploadMaxAgeSeconds?: number;
  /** Receives one event per removal and a summary. */
  log?: LogHook;
  /** The clock (tests). Default `() => new Date()`. */
  now?: () => Date;
}

/** What {@link collectGarbage} removed, or would remove in a dry run. */
export interface GcReport {
  /** True when nothing was removed, only reported. */
  dryRun: boolean;
  /** Repositories seen under `repositories/`. */
  repositories: number;
  /** Manifest revisions. */
  manifests: {
    /** Revisions examined (over all repositories). */
    scanned: number;
    /** `<repository>@<digest>` of each revision removed. */
    removed: string[];
  };
  /** Blob objects. */
  blobs: {
    /** Blob objects examined. */
    scanned: number;
    /** Digests of the blobs removed. */
    removed: string[];
    /** Unreferenced blobs kept because they (or a link to them) are younger than the grace period. */
    protected: number;
    /** Repository links removed with them. */
    linksRemoved: number;
    /** Bytes of the removed blobs. */
    bytes: number;
  };
  /** Uploads in progress. */
  uploads: {
    /** Uploads examined. */
    scanned: number;
    /** `<repository>/<uuid>` of each upload removed. */
    removed: string[];
    /** Bytes of the removed uploads. */
    bytes: number;
  };
  /** `blobs.bytes + uploads.bytes`. */
  bytesFreed: number;
}

/** Storage round trips in flight at once. */
const CONCURRENCY = 16;

interface Repository {
  name: string;
  /** Revision digest value → its key. */
  revisions: Map<string, Digest>;
  /** Tag → digest value. */
  tags: Map<string, string>;
  uploads: string[];
}

/**
 * Run one garbage collection over a registry's storage. Works on any driver;
 * the registry may keep serving meanwhile.
 *
 * @example
 * ```ts
 * const { blobs, bytesFreed } = await collectGarbage(storage, { dryRun: true });
 * // blobs.removed lists what a real run would delete; bytesFreed what it would free
 * ```
 */
export async function collectGarbage(driver: StorageDriver, options: GcOptions = {}): Promise<GcReport> {
  const storage = checked(driver);
  const dryRun = options.dryRun ?? false;
  const log = options.log ?? silent;
  const now = (options.now ?? (() => new Date()))().getTime();
  const graceCutoff = now - (options.gracePeriodSeconds ?? 3600) * 1000;
  const uploadCutoff = now - (options.uploadMaxAgeSeconds ?? 7 * 24 * 3600) * 1000;
  const fresh = (modified: Date | undefined) => modified !== undefined && modified.getTime() > graceCutoff;

  const report: GcReport = {
    dryRun,
    repositories: 0,
    manifests: { scanned: 0, removed: [] },
    blobs: { scanned: 0, removed: [], protected: 0, linksRemoved: 0, bytes: 0 },
    uploads: { scanned: 0, removed: [], bytes: 0 },
    bytesFreed: 0,
  };

  // One pass over every repository key.
  const repos = new Map<string, Repository>();
  /** Blob digest value → repositories linking it. */
  const links = new Map<string, string[]>();
  for await (const key of eachKey(storage, "repositories")) {
    const parsed = parseRepositoryKey(key);
    if (!parsed) continue;
    let repo = repos.get(parsed.name);
    if (!repo) repos.set(parsed.name, (repo = { name: parsed.name, revisions: new Map(), tags: new Map(), uploads: [] }));
    const { kind, rest } = parsed;
    if (kind === "_manifests" && rest[0] === "revisions" && rest.length === 3) {
      const digest = tryParseDigest(`${rest[1]}:${rest[2]}`);
      if (digest) repo.revisions.set(digest.value, digest);
    } else if (kind === "_manifests" && rest[0] === "tags" && rest.length === 2) {
      repo.tags.set(rest[1] as string, "");
    } else if (kind === "_layers" && rest.length === 2) {
      const digest = tryParseDigest(`${rest[0]}:${rest[1]}`);
      if (digest) links.set(digest.value, [...(links.get(digest.value) ?? []), parsed.name]);
    } else if (kind === "_uploads" && rest.length === 2 && rest[1] === "data") {
      repo.uploads.push(rest[0] as string);
    }
  }
  report.repositories = repos.size;

  // Tags resolve to digests.
  for (const repo of repos.values()) {
    const tags = [...repo.tags.keys()];
    const values = await mapLimited(tags, CONCURRENCY, (tag) => readText(storage, `${tagsPrefix(repo.name)}/${tag}`));
    tags.forEach((tag, i) => {
      const value = values[i]?.trim();
      if (value) repo.tags.set(tag, value);
      else repo.tags.delete(tag);
    });
    report.manifests.scanned += repo.revisions.size;
  }

  // Mark.
  const markedBlobs = new Set<string>();
  /** `<repo>\n<digest>` of the kept revisions. */
  const keptRevisions = new Set<string>();
  const metas = new Map<string, ManifestMeta | undefined>();
  const metaOf = async (repo: string, digest: Digest): Promise<ManifestMeta | undefined> => {
    const id = `${repo}\n${digest.value}`;
    if (!metas.has(id)) metas.set(id, await readJson<ManifestMeta>(storage, manifestRevision(repo, digest)).catch(() => undefined));
    return metas.get(id);
  };

  /** Keep a revision and everything it references (children recursively). */
  const keep = async (repo: Repository, digest: Digest): Promise<void> => {
    const pending = [digest];
    while (pending.length > 0) {
      const batch: Digest[] = [];
      for (const d of pending.splice(0)) {
        const id = `${repo.name}\n${d.value}`;
        if (keptRevisions.has(id)) continue;
        keptRevisions.add(id);
        batch.push(d);
      }
      const refs = await mapLimited(batch, CONCURRENCY, (d) => references(storage, d, log));
      batch.forEach((d, i) => {
        markedBlobs.add(d.value);
        const r = refs[i];
        if (!r) return;
        for (const blob of r.blobs) markedBlobs.add(blob);
        for (const child of r.children) {
          markedBlobs.add(child.value);
          // A child stored in this repository is kept with its own references.
          if (repo.revisions.has(child.value)) pending.push(child);
        }
      });
    }
  };

  for (const repo of repos.values()) {
    const revisions = [...repo.revisions.values()];
    if (!options.removeUntagged) {
      await mapLimited(revisions, CONCURRENCY, (d) => keep(repo, d));
      continue;
    }
    // Roots: tagged revisions and revisions younger than the grace period.
    const tagged = new Set(repo.tags.values());
    const infos = await mapLimited(revisions, CONCURRENCY, (d) => storage.stat(manifestRevision(repo.name, d)));
    for (const [i, d] of revisions.entries()) {
      if (tagged.has(d.value) || fresh(infos[i]?.modified)) await keep(repo, d);
    }
    // Referrers of kept subjects, until nothing changes.
    const subjects = await mapLimited(revisions, CONCURRENCY, async (d) => (await metaOf(repo.name, d))?.subject);
    for (let changed = true; changed; ) {
      changed = false;
      for (const [i, d] of revisions.entries()) {
        const subject = subjects[i];
        if (keptRevisions.has(`${repo.name}\n${d.value}`) || subject === undefined) continue;
        if (keptRevisions.has(`${repo.name}\n${subject}`)) {
          await keep(repo, d);
          changed = true;
        }
      }
    }
  }

  // Sweep untagged manifests.
  const removedRevisions = new Set<string>();
  if (options.removeUntagged) {
    for (const repo of repos.values()) {
      const doomed = [...repo.revisions.values()].filter((d) => !keptRevisions.has(`${repo.name}\n${d.value}`));
      if (doomed.length === 0) continue;
      let tagged = await currentTags(storage, repo.name);
      for (const digest of doomed) {
        const key = manifestRevision(repo.name, digest);
        if (tagged.has(digest.value) || fresh((await storage.stat(key))?.modified)) continue; // pushed again meanwhile
        const meta = await metaOf(repo.name, digest);
        if (!dryRun) {
          const subject = meta?.subject === undefined ? undefined : tryParseDigest(meta.subject);
          if (subject) await storage.delete(referrer(repo.name, subject, digest));
          await storage.delete(key);
          tagged = await currentTags(storage, repo.name);
          if (tagged.has(digest.value)) {
            // A push tagged it between our check and the delete: put it back, keep its blobs.
            if (meta) await writeJson(storage, key, meta);
            log({ level: "warn", msg: "gc kept a manifest tagged while it ran", repository: repo.name, digest: digest.value });
            await keep(repo, digest);
            continue;
          }
        }
        removedRevisions.add(`${repo.name}\n${digest.value}`);
        report.manifests.removed.push(`${repo.name}@${digest.value}`);
        log({ level: "info", msg: dryRun ? "gc would remove manifest" : "gc removed manifest", repository: repo.name, digest: digest.value });
      }
    }
  }

  // Mark again: revisions stored while we ran (a push that finished meanwhile), and links made meanwhile.
  if (!dryRun) {
    for await (const key of eachKey(storage, "repositories")) {
      const parsed = parseRepositoryKey(key);
      if (parsed?.kind === "_layers" && parsed.rest.length === 2) {
        const digest = tryParseDigest(`${parsed.rest[0]}:${parsed.rest[1]}`);
        const linkedIn = digest && (links.get(digest.value) ?? []);
        if (digest && linkedIn && !linkedIn.includes(parsed.name)) links.set(digest.value, [...linkedIn, parsed.name]);
        continue;
      }
      if (!parsed || parsed.kind !== "_manifests" || parsed.rest[0] !== "revisions" || parsed.rest.length !== 3) continue;
      const digest = tryParseDigest(`${parsed.rest[1]}:${parsed.rest[2]}`);
      const id = `${parsed.name}\n${digest?.value}`;
      if (!digest || keptRevisions.has(id) || removedRevisions.has(id)) continue;
      let repo = repos.get(parsed.name);
      if (!repo) repos.set(parsed.name, (repo = { name: parsed.name, revisions: new Map(), tags: new Map(), uploads: [] }));
      repo.revisions.set(digest.value, digest);
      await keep(repo, digest);
    }
  }

  // Sweep blobs.
  const candidates: { digest: Digest; key: string }[] = [];
  for await (const key of eachKey(storage, "blobs")) {
    const match = /^blobs\/([a-z0-9]+)\/[0-9a-f]{2}\/([0-9a-f]+)\/data$/.exec(key);
    const digest = match && tryParseDigest(`${match[1]}:${match[2]}`);
    if (!digest || blobData(digest) !== key) continue;
    report.blobs.scanned++;
    if (!markedBlobs.has(digest.value)) candidates.push({ digest, key });
  }
  const removedBlobs = new Set<string>();
  await mapLimited(candidates, CONCURRENCY, async ({ digest, key }) => {
    const info = await storage.stat(key);
    if (!info) return;
    const linkedIn = links.get(digest.value) ?? [];
    const linkInfos = await Promise.all(linkedIn.map((repo) => storage.stat(layerLink(repo, digest))));
    if (fresh(info.modified) || linkInfos.some((l) => fresh(l?.modified))) {
      report.blobs.protected++;
      return;
    }
    if (!dryRun) {
      // Links first: the blob stops being visible before its bytes go.
      for (const repo of linkedIn) await storage.delete(layerLink(repo, digest));
      // Pushed again meanwhile (an upload moved fresh bytes in): leave the bytes for its link.
      if (fresh((await storage.stat(key))?.modified)) {
        report.blobs.protected++;
        return;
      }
      await storage.delete(key);
    }
    report.blobs.linksRemoved += linkInfos.filter((l) => l !== undefined).length;
    removedBlobs.add(digest.value);
    report.blobs.removed.push(digest.value);
    report.blobs.bytes += info.size;
    log({ level: "info", msg: dryRun ? "gc would remove blob" : "gc removed blob", digest: digest.value, size: info.size });
  });
  // Links to blobs that no longer exist at all (left by an interrupted sweep) are dropped too.
  for (const [value, linkedIn] of links) {
    if (markedBlobs.has(value) || removedBlobs.has(value)) continue;
    const digest = tryParseDigest(value);
    if (!digest || (await storage.stat(blobData(digest)))) continue;
    for (const repo of linkedIn) {
      const info = await storage.stat(layerLink(repo, digest));
      if (!info || fresh(info.modified)) continue;
      if (!dryRun) await storage.delete(layerLink(repo, digest));
      report.blobs.linksRemoved++;
    }
  }

  // Abandoned uploads.
  for (const repo of repos.values()) {
    report.uploads.scanned += repo.uploads.length;
    for (const uuid of repo.uploads) {
      const info = await storage.stat(`${uploadDir(repo.name, uuid)}/data`);
      if (!info || info.modified.getTime() > uploadCutoff) continue;
      if (!dryRun) await storage.deletePrefix(uploadDir(repo.name, uuid));
      report.uploads.removed.push(`${repo.name}/${uuid}`);
      report.uploads.bytes += info.size;
      log({ level: "info", msg: dryRun ? "gc would remove upload" : "gc removed upload", repository: repo.name, uuid, size: info.size });
    }
  }

  report.bytesFreed = report.blobs.bytes + report.uploads.bytes;
  log({
    level: "info",
    msg: dryRun ? "gc dry run done" : "gc done",
    manifests: report.manifests.removed.length,
    blobs: report.blobs.removed.length,
    uploads: report.uploads.removed.length,
    bytes: report.bytesFreed,
  });
  return report;
}

/** Split `repositories/<name>/<_kind>/<rest…>`; names never have `_`-prefixed segments. */
function parseRepositoryKey(key: string): { name: string; kind: string; rest: string[] } | undefined {
  const segments = key.split("/");
  const at = segments.findIndex((s, i) => i >= 2 && s.startsWith("_"));
  if (segments[0] !== "repositories" || at < 0) return undefined;
  return { name: segments.slice(1, at).join("/"), kind: segments[at] as string, rest: segments.slice(at + 1) };
}

/** The digests every tag of `repo` points at now. */
async function currentTags(storage: StorageDriver, repo: string): Promise<Set<string>> {
  const keys: string[] = [];
  for await (const key of eachKey(storage, tagsPrefix(repo))) keys.push(key);
  const values = await mapLimited(keys, CONCURRENCY, (key) => readText(storage, key));
  return new Set(values.flatMap((v) => (v === undefined ? [] : [v.trim()])));
}

/**
 * The blobs and child manifests a stored manifest references, read leniently
 * (whatever the registry accepted at push time). `undefined` when its bytes are
 * missing or not JSON: it then keeps nothing but itself.
 */
async function references(storage: StorageDriver, digest: Digest, log: LogHook): Promise<{ blobs: string[]; children: Digest[] } | undefined> {
  let doc: unknown;
  try {
    const bytes = await readSmall(storage, blobData(digest), 64 * 1024 * 1024);
    if (!bytes) return undefined;
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    log({ level: "warn", msg: "gc cannot parse a manifest; it keeps no blobs", digest: digest.value });
    return undefined;
  }
  const descriptors = (value: unknown): Digest[] =>
    (Array.isArray(value) ? value : value === undefined ? [] : [value]).flatMap((d) => {
      const parsed = typeof d === "object" && d !== null && typeof (d as { digest?: unknown }).digest === "string"
        ? tryParseDigest((d as { digest: string }).digest)
        : undefined;
      return parsed ? [parsed] : [];
    });
  const m = (typeof doc === "object" && doc !== null ? doc : {}) as Record<string, unknown>;
  return {
    blobs: [...descriptors(m.config), ...descriptors(m.layers), ...descriptors(m.blobs)].map((d) => d.value),
    children: descriptors(m.manifests),
  };
}
