/**
 * Remove what the mark did not keep, never anything younger than the grace
 * period, and nothing at all in a dry run (which only reports):
 *
 * - **Manifests** (`removeUntagged` only): the referrers entry, then the
 *   revision, as `DELETE` by digest does. Tags are read again just before and
 *   just after; a revision a concurrent push tagged meanwhile is kept (or put
 *   back).
 * - **Blobs**: the repository links first (the blob stops being visible, so a
 *   racing manifest PUT gets `MANIFEST_BLOB_UNKNOWN` rather than a dangling
 *   reference), then the data; then links to blobs that no longer exist.
 * - **Uploads** last written before the upload cutoff.
 *
 * @module
 */
import { tryParseDigest, type Digest } from "../../../../oci/digest.js";
import { blobData, layerLink, manifestRevision, parseKey, referrer, uploadData, uploadDir } from "../layout.js";
import type { ObjectInfo } from "../../../../storage/driver.js";
import { eachEntry, mapLimited, writeJson } from "../storage-io.js";
import { keep, metaOf } from "./mark.js";
import { currentTags } from "./scan.js";
import { CONCURRENCY, revisionId, type GcRun, type Repository } from "./state.js";
import { forgetIfEmpty } from "../repository-delete.js";

/** Remove the revisions the mark did not keep; a repository left without any leaves the catalog. */
export async function sweepManifests(run: GcRun): Promise<void> {
  for (const repo of run.repos.values()) {
    const doomed = [...repo.revisions.values()].filter((d) => !run.keptRevisions.has(revisionId(repo.name, d)));
    if (doomed.length === 0) continue;
    await sweepRepositoryManifests(run, repo, doomed);
    if (!run.dryRun && (await forgetIfEmpty(run.storage, repo.name))) {
      run.log({ level: "info", msg: "gc removed an emptied repository from the catalog", repository: repo.name });
      await run.emit(undefined, { action: "repository.emptied", target: { repository: repo.name } });
    }
  }
}

async function sweepRepositoryManifests(run: GcRun, repo: Repository, doomed: Digest[]): Promise<void> {
  const { storage, dryRun, log } = run;
  const retired = dryRun ? run.retired : undefined;
  let tagged = await currentTags(storage, repo.name, retired);
  for (const digest of doomed) {
    const key = manifestRevision(repo.name, digest);
    if (tagged.has(digest.value) || run.fresh((await storage.stat(key))?.modified)) continue; // pushed again meanwhile
    const meta = await metaOf(run, repo.name, digest);
    if (!dryRun) {
      const subject = meta?.subject === undefined ? undefined : tryParseDigest(meta.subject);
      if (subject) await storage.delete(referrer(repo.name, subject, digest));
      await storage.delete(key);
      tagged = await currentTags(storage, repo.name);
      if (tagged.has(digest.value)) {
        // A push tagged it between our check and the delete: put it back, keep its blobs.
        if (meta) await writeJson(storage, key, meta);
        log({ level: "warn", msg: "gc kept a manifest tagged while it ran", repository: repo.name, digest: digest.value });
        await keep(run, repo, digest);
        continue;
      }
    }
    run.removedRevisions.add(revisionId(repo.name, digest));
    run.report.manifests.removed.push(`${repo.name}@${digest.value}`);
    log({ level: "info", msg: dryRun ? "gc would remove manifest" : "gc removed manifest", repository: repo.name, digest: digest.value });
  }
}

/** Remove the blobs nothing kept references, with their links, then links left to blobs that are gone. */
export async function sweepBlobs(run: GcRun): Promise<void> {
  const candidates: { digest: Digest; key: string; listed: ObjectInfo | undefined }[] = [];
  for await (const { key, info } of eachEntry(run.storage, "blobs")) {
    const parsed = parseKey(key);
    if (parsed.kind !== "blobData") continue;
    run.report.blobs.scanned++;
    if (!run.markedBlobs.has(parsed.digest.value)) candidates.push({ digest: parsed.digest, key, listed: info });
  }
  const removed = new Set<string>();
  await mapLimited(candidates, CONCURRENCY, async ({ digest, key, listed }) => {
    if (await removeBlob(run, digest, key, listed)) removed.add(digest.value);
  });
  await removeDanglingLinks(run, removed);
}

/**
 * Remove one unreferenced blob unless it or a link to it is fresh; true when it
 * was (or would be) removed. `listed` is what the blob listing said of it, when
 * the driver said (S3): that saves a HEAD per blob. It is as good as a `stat`
 * for the grace period, because a blob pushed again after the listing also
 * gets a fresh link (stat'ed here, live) and fresh bytes (stat'ed again below
 * before they go).
 */
async function removeBlob(run: GcRun, digest: Digest, key: string, listed: ObjectInfo | undefined): Promise<boolean> {
  const { storage, dryRun, report } = run;
  const info = listed ?? (await storage.stat(key));
  if (!info) return false;
  const linkedIn = run.links.get(digest.value) ?? [];
  const linkInfos = await Promise.all(linkedIn.map((repo) => storage.stat(layerLink(repo, digest))));
  if (run.fresh(info.modified) || linkInfos.some((l) => run.fresh(l?.modified))) {
    report.blobs.protected++;
    return false;
  }
  if (!dryRun) {
    // Links first: the blob stops being visible before its bytes go.
    for (const repo of linkedIn) await storage.delete(layerLink(repo, digest));
    // Pushed again meanwhile (an upload moved fresh bytes in): leave the bytes for its link.
    if (run.fresh((await storage.stat(key))?.modified)) {
      report.blobs.protected++;
      return false;
    }
    await storage.delete(key);
  }
  report.blobs.linksRemoved += linkInfos.filter((l) => l !== undefined).length;
  report.blobs.removed.push(digest.value);
  report.blobs.bytes += info.size;
  run.log({ level: "info", msg: dryRun ? "gc would remove blob" : "gc removed blob", digest: digest.value, size: info.size });
  return true;
}

/** Links to blobs that no longer exist at all (left by an interrupted sweep) are dropped too. */
async function removeDanglingLinks(run: GcRun, removedBlobs: Set<string>): Promise<void> {
  const { storage } = run;
  for (const [value, linkedIn] of run.links) {
    if (run.markedBlobs.has(value) || removedBlobs.has(value)) continue;
    const digest = tryParseDigest(value);
    if (!digest || (await storage.stat(blobData(digest)))) continue;
    for (const repo of linkedIn) {
      const info = await storage.stat(layerLink(repo, digest));
      if (!info || run.fresh(info.modified)) continue;
      if (!run.dryRun) await storage.delete(layerLink(repo, digest));
      run.report.blobs.linksRemoved++;
    }
  }
}

/** Remove the uploads last written before the upload cutoff. */
export async function sweepUploads(run: GcRun): Promise<void> {
  const { storage, dryRun, report } = run;
  for (const repo of run.repos.values()) {
    report.uploads.scanned += repo.uploads.length;
    for (const uuid of repo.uploads) {
      const info = await storage.stat(uploadData(repo.name, uuid));
      if (!info || info.modified.getTime() > run.uploadCutoff) continue;
      if (!dryRun) await storage.deletePrefix(uploadDir(repo.name, uuid));
      report.uploads.removed.push(`${repo.name}/${uuid}`);
      report.uploads.bytes += info.size;
      run.log({ level: "info", msg: dryRun ? "gc would remove upload" : "gc removed upload", repository: repo.name, uuid, size: info.size });
    }
  }
}
