/**
 * Remove what the mark did not keep, never anything younger than the grace
 * period, and nothing at all in a dry run (which only reports):
 *
 * - **Manifests** (`removeUntagged` only): the referrers entry, then the
 *   revision, as `DELETE` by digest does. Tags are read again just before and
 *   just after; a revision a concurrent push tagged meanwhile is kept (or put
 *   back).
 * - **Blobs**: in `sweep-blobs.ts`.
 * - **Uploads** last written before the upload cutoff.
 *
 * @module
 */
import { tryParseDigest, type Digest } from "../../../../oci/digest.js";
import { blobData, manifestRevision, referrer, uploadData, uploadDir, type ManifestMeta } from "../layout.js";
import { ensureRepository, readSmall, writeJson } from "../storage-io.js";
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

/**
 * Put back the revisions the manifest sweep removed that a kept manifest turns
 * out to need: an index pushed while the run went on, whose child was
 * untagged when the sweep took it. Called after each mark again.
 */
export async function restoreRevisions(run: GcRun): Promise<void> {
  for (const id of [...run.removedRevisions]) {
    if (!run.keptRevisions.has(id)) continue;
    const [name = "", value = ""] = id.split("\n");
    const digest = tryParseDigest(value);
    const meta = run.metas.get(id);
    if (!digest || !meta) continue;
    await writeJson(run.storage, manifestRevision(name, digest), meta);
    const subject = meta.subject === undefined ? undefined : tryParseDigest(meta.subject);
    if (subject) await writeJson(run.storage, referrer(name, subject, digest), await referrerEntry(run, digest, meta));
    await ensureRepository(run.storage, name);
    run.removedRevisions.delete(id);
    run.report.manifests.removed = run.report.manifests.removed.filter((r) => r !== `${name}@${value}`);
    run.log({ level: "warn", msg: "gc put back a manifest that one pushed while it ran references", repository: name, digest: value });
  }
}

/** The referrers index entry of a revision, as a manifest PUT writes it. */
async function referrerEntry(run: GcRun, digest: Digest, meta: ManifestMeta): Promise<Record<string, unknown>> {
  const entry: Record<string, unknown> = { mediaType: meta.mediaType, digest: digest.value, size: meta.size };
  if (meta.artifactType !== undefined) entry.artifactType = meta.artifactType;
  const bytes = await readSmall(run.storage, blobData(digest), meta.size).catch(() => undefined);
  try {
    const annotations = bytes && (JSON.parse(new TextDecoder().decode(bytes)) as { annotations?: unknown }).annotations;
    if (annotations && typeof annotations === "object") entry.annotations = annotations;
  } catch {
    // Stored bytes were parsed once at push; unreadable now, the entry goes without annotations.
  }
  return entry;
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
