/**
 * Garbage collection: a mark-and-sweep of the blobs no manifest references,
 * optionally of the manifests no tag references, and of abandoned uploads.
 * Safe to run while the registry keeps serving pushes (see docs/gc.md). The
 * phases, each in its own module over the run's state (`state.ts`):
 *
 * 0. **Recover** (`sweep-blobs.ts`): bytes a killed run left aside go back.
 * 1. **Scan** (`scan.ts`): walk `repositories/` into a model.
 * 2. **Retention** (`retention.ts`): remove the tags no rule keeps.
 * 3. **Mark** (`mark.ts`): the kept revisions and every blob they reference.
 * 4. **Sweep manifests** (`sweep.ts`; with `removeUntagged`, or where a
 *    retention rule applies); an emptied repository leaves the catalog.
 * 5. **Mark again** (`mark.ts`): revisions and links that appeared while the
 *    sweep ran, so a push that finished meanwhile keeps its blobs (and an index
 *    pushed meanwhile the children the manifest sweep took: they are put back).
 * 6. **Unlink blobs** (`sweep-blobs.ts`) nothing kept references; a blob whose
 *    data or any repository link is younger than the grace period is never
 *    touched, which covers blobs uploaded or mounted for a manifest that is not
 *    pushed yet.
 * 7. **Mark again**, then **remove blobs** (`sweep-blobs.ts`): what a manifest
 *    stored meanwhile references is linked again and kept; the rest's bytes
 *    are moved aside, everything is listed once more, and only bytes nothing
 *    references or links then are deleted (the others go back). So a manifest
 *    PUT the registry accepted never loses a blob, whatever the grace period.
 * 8. **Sweep uploads** (`sweep.ts`) last written more than the upload maximum
 *    age ago; younger ones are never touched.
 *
 * @module
 */
import { eventEmitter, type EventHook } from "../../../../events/hook.js";
import { silent, type LogHook } from "../../../../http/log.js";
import { checked, type StorageDriver } from "../../../../storage/driver.js";
import { markNewRevisions, markReachable } from "./mark.js";
import { scanRepositories } from "./scan.js";
import { applyRetention, compileRetention, type RetentionRule } from "./retention.js";
import { newRun, type GcReport } from "./state.js";
import { recoverTrash, removeBlobs, unlinkBlobs } from "./sweep-blobs.js";
import { restoreRevisions, sweepManifests, sweepUploads } from "./sweep.js";

export type { GcReport } from "./state.js";
export type { RetentionRule } from "./retention.js";

/** Options of {@link collectGarbage}. */
export interface GcOptions {
  /** Report what would be removed, remove nothing. Default false. */
  dryRun?: boolean;
  /** Also remove manifests no tag references (directly or as an index child or a referrer). Default false. */
  removeUntagged?: boolean;
  /**
   * Retention rules (docs/policies.md): in the repositories a rule applies to,
   * the tags no rule keeps are removed first, then the manifests left untagged
   * (as with `removeUntagged`) and their blobs. Default: none.
   */
  retention?: readonly RetentionRule[];
  /** Tags retention never removes, e.g. `immutableTags(…).protects`. Default: none. */
  protectTag?: (repository: string, tag: string) => boolean;
  /** Blobs, links and manifests younger than this are never removed. Default 3600 (one hour). */
  gracePeriodSeconds?: number;
  /** Uploads whose object was last written longer ago than this are removed. Default 7 days, the registry's default. */
  uploadMaxAgeSeconds?: number;
  /** Receives one event per removal and a summary. */
  log?: LogHook;
  /** The clock (tests). Default `() => new Date()`. */
  now?: () => Date;
  /** Receives a `gc.completed` event with the run's counts when it ends. */
  onEvent?: EventHook;
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
  const now = (options.now ?? (() => new Date()))().getTime();
  const graceCutoff = now - (options.gracePeriodSeconds ?? 3600) * 1000;
  const log = options.log ?? silent;
  const run = newRun(checked(driver), {
    emit: eventEmitter({ onEvent: options.onEvent, log }),
    dryRun: options.dryRun ?? false,
    removeUntagged: options.removeUntagged ?? false,
    retention: compileRetention(options.retention ?? [], now),
    protectTag: options.protectTag ?? (() => false),
    log,
    fresh: (modified) => modified !== undefined && modified.getTime() > graceCutoff,
    uploadCutoff: now - (options.uploadMaxAgeSeconds ?? 7 * 24 * 3600) * 1000,
  });

  await recoverTrash(run);
  await scanRepositories(run);
  await applyRetention(run);
  await markReachable(run);
  await sweepManifests(run);
  // A dry run deletes nothing, so what a push adds meanwhile is at no risk.
  const markAgain = async () => {
    if (run.dryRun) return new Set<string>();
    const linked = await markNewRevisions(run);
    await restoreRevisions(run);
    return linked;
  };
  await markAgain();
  const unlinked = await unlinkBlobs(run);
  await removeBlobs(run, unlinked, await markAgain());
  await sweepUploads(run);

  const { report } = run;
  report.bytesFreed = report.blobs.bytes + report.uploads.bytes;
  run.log({
    level: "info",
    msg: run.dryRun ? "gc dry run done" : "gc done",
    tags: report.tags.removed.length,
    manifests: report.manifests.removed.length,
    blobs: report.blobs.removed.length,
    uploads: report.uploads.removed.length,
    bytes: report.bytesFreed,
  });
  const counts = { dryRun: run.dryRun, tags: report.tags.removed.length, manifests: report.manifests.removed.length, blobs: report.blobs.removed.length, uploads: report.uploads.removed.length, bytesFreed: report.bytesFreed };
  await run.emit(undefined, { action: "gc.completed", target: { report: counts } });
  return report;
}
