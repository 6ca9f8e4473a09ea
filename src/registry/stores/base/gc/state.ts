/**
 * The state one garbage collection works on, passed explicitly from phase to
 * phase: what the scan found, what the mark keeps, what the sweep removed, and
 * the report they fill.
 *
 * @module
 */
import type { Emit } from "../../../../events/hook.js";
import type { LogHook } from "../../../../http/log.js";
import type { StorageDriver } from "../../../../storage/driver.js";
import type { Digest } from "../../../../oci/digest.js";
import type { ManifestMeta } from "../layout.js";

/** A retention rule ready to apply (retention.ts compiles them). */
export interface CompiledRule {
  repository: (name: string) => boolean;
  tag: (tag: string) => boolean;
  keepLast: number;
  /** Pushed after this time (ms since the epoch): kept; `-Infinity` when the rule has no age. */
  keepAfter: number;
}

/** Storage round trips in flight at once. */
export const CONCURRENCY = 16;

/** What {@link collectGarbage} removed, or would remove in a dry run. */
export interface GcReport {
  /** True when nothing was removed, only reported. */
  dryRun: boolean;
  /** Repositories seen under `repositories/`. */
  repositories: number;
  /** Tags retention removed. */
  tags: {
    /** `<repository>:<tag>` of each tag removed. */
    removed: string[];
  };
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

/** One repository as the scan found it. */
export interface Repository {
  name: string;
  /** Revision digest value → its digest. */
  revisions: Map<string, Digest>;
  /** Tag → digest value (empty until the tags are read). */
  tags: Map<string, string>;
  /** Ids of its uploads in progress. */
  uploads: string[];
}

/** Everything one run knows; each phase reads and adds to it. */
export interface GcRun {
  storage: StorageDriver;
  dryRun: boolean;
  /** Remove untagged manifests in every repository (`removeUntagged`). */
  removeUntagged: boolean;
  /** Retention rules (retention.ts); a repository one applies to loses its untagged manifests too. */
  retention: CompiledRule[];
  /** Tags retention never removes (immutable ones). */
  protectTag: (repository: string, tag: string) => boolean;
  /** `<repository>:<tag>` of the tags retention removed (or would, in a dry run). */
  retired: Set<string>;
  log: LogHook;
  /** Emits the run's events (`repository.emptied`, `gc.completed`). */
  emit: Emit;
  /** True when `modified` is within the grace period (such objects are never removed). */
  fresh: (modified: Date | undefined) => boolean;
  /** Uploads last written before this time (ms since the epoch) are abandoned. */
  uploadCutoff: number;
  report: GcReport;
  /** Repository name → what the scan found in it. */
  repos: Map<string, Repository>;
  /** Blob digest value → repositories linking it. */
  links: Map<string, string[]>;
  /** Digest values of the blobs (and manifest bytes) a kept manifest references. */
  markedBlobs: Set<string>;
  /** {@link revisionId}s of the kept revisions. */
  keptRevisions: Set<string>;
  /** {@link revisionId}s of the revisions removed (or that would be, in a dry run). */
  removedRevisions: Set<string>;
  /** Manifest metadata read so far, by {@link revisionId}. */
  metas: Map<string, ManifestMeta | undefined>;
}

/** A new run with an empty model and report. */
export function newRun(storage: StorageDriver, settings: Pick<GcRun, "dryRun" | "removeUntagged" | "retention" | "protectTag" | "log" | "emit" | "fresh" | "uploadCutoff">): GcRun {
  return {
    storage,
    ...settings,
    retired: new Set(),
    report: {
      dryRun: settings.dryRun,
      repositories: 0,
      tags: { removed: [] },
      manifests: { scanned: 0, removed: [] },
      blobs: { scanned: 0, removed: [], protected: 0, linksRemoved: 0, bytes: 0 },
      uploads: { scanned: 0, removed: [], bytes: 0 },
      bytesFreed: 0,
    },
    repos: new Map(),
    links: new Map(),
    markedBlobs: new Set(),
    keptRevisions: new Set(),
    removedRevisions: new Set(),
    metas: new Map(),
  };
}

/** Whether the untagged manifests of `name` go in this run: everywhere with `removeUntagged`, else where a retention rule applies. */
export function untaggedGo(run: GcRun, name: string): boolean {
  return run.removeUntagged || run.retention.some((r) => r.repository(name));
}

/** The key of a revision in the run's sets: repository and digest. */
export const revisionId = (repo: string, digest: Digest | string) => `${repo}\n${typeof digest === "string" ? digest : digest.value}`;

/** The repository `name` of the model, added when first seen. */
export function repository(run: GcRun, name: string): Repository {
  let repo = run.repos.get(name);
  if (!repo) run.repos.set(name, (repo = { name, revisions: new Map(), tags: new Map(), uploads: [] }));
  return repo;
}

/** Record that `name` links blob `digest` (once). */
export function addLink(run: GcRun, digest: string, name: string): void {
  const linkedIn = run.links.get(digest) ?? [];
  if (!linkedIn.includes(name)) run.links.set(digest, [...linkedIn, name]);
}
