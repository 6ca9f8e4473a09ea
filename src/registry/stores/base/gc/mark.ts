/**
 * What is reachable: the kept manifest revisions and every blob they
 * reference. Roots are every revision, or with `removeUntagged` (and in the
 * repositories a retention rule applies to) the tagged ones, the ones younger than the grace period and, until nothing changes, the
 * referrers of kept subjects. A kept index keeps its children recursively.
 *
 * @module
 */
import type { Digest } from "../../../../oci/digest.js";
import { manifestRevision, parseKey, type ManifestMeta } from "../layout.js";
import { storedReferences } from "../manifest-references.js";
import { eachKey, mapLimited, readJson } from "../storage-io.js";
import { addLink, CONCURRENCY, repository, revisionId, untaggedGo, type GcRun, type Repository } from "./state.js";

/** Mark the roots of every repository and what they reference. */
export async function markReachable(run: GcRun): Promise<void> {
  for (const repo of run.repos.values()) {
    const revisions = [...repo.revisions.values()];
    if (!untaggedGo(run, repo.name)) {
      await mapLimited(revisions, CONCURRENCY, (d) => keep(run, repo, d));
      continue;
    }
    // Roots: tagged revisions and revisions younger than the grace period.
    const tagged = new Set(repo.tags.values());
    const infos = await mapLimited(revisions, CONCURRENCY, (d) => run.storage.stat(manifestRevision(repo.name, d)));
    for (const [i, d] of revisions.entries()) {
      if (tagged.has(d.value) || run.fresh(infos[i]?.modified)) await keep(run, repo, d);
    }
    await keepReferrersOfKept(run, repo, revisions);
  }
}

/** Keep the referrers of kept subjects, until nothing changes (a referrer may be a subject too). */
async function keepReferrersOfKept(run: GcRun, repo: Repository, revisions: Digest[]): Promise<void> {
  const subjects = await mapLimited(revisions, CONCURRENCY, async (d) => (await metaOf(run, repo.name, d))?.subject);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [i, d] of revisions.entries()) {
      const subject = subjects[i];
      if (run.keptRevisions.has(revisionId(repo.name, d)) || subject === undefined) continue;
      if (run.keptRevisions.has(revisionId(repo.name, subject))) {
        await keep(run, repo, d);
        changed = true;
      }
    }
  }
}

/**
 * Mark again, after the manifest sweep and after the blobs are unlinked:
 * revisions stored while the run went on (a push that finished meanwhile) are
 * kept with what they reference, and links made meanwhile are recorded.
 * Resolves to the digests of the blobs some repository links now.
 */
export async function markNewRevisions(run: GcRun): Promise<Set<string>> {
  const linked = new Set<string>();
  for await (const key of eachKey(run.storage, "repositories")) {
    const parsed = parseKey(key);
    if (parsed.kind === "layerLink") {
      addLink(run, parsed.digest.value, parsed.name);
      linked.add(parsed.digest.value);
      continue;
    }
    if (parsed.kind !== "manifestRevision") continue;
    const id = revisionId(parsed.name, parsed.digest);
    if (run.keptRevisions.has(id) || run.removedRevisions.has(id)) continue;
    const repo = repository(run, parsed.name);
    repo.revisions.set(parsed.digest.value, parsed.digest);
    await keep(run, repo, parsed.digest);
  }
  return linked;
}

/** Keep a revision and everything it references (children recursively). */
export async function keep(run: GcRun, repo: Repository, digest: Digest): Promise<void> {
  const pending = [digest];
  while (pending.length > 0) {
    const batch: Digest[] = [];
    for (const d of pending.splice(0)) {
      const id = revisionId(repo.name, d);
      if (run.keptRevisions.has(id)) continue;
      run.keptRevisions.add(id);
      batch.push(d);
    }
    const refs = await mapLimited(batch, CONCURRENCY, (d) => storedReferences(run.storage, d, run.log));
    batch.forEach((d, i) => {
      run.markedBlobs.add(d.value);
      const r = refs[i];
      if (!r) return;
      for (const blob of r.blobs) run.markedBlobs.add(blob);
      for (const child of r.children) {
        run.markedBlobs.add(child.value);
        // A child stored in this repository is kept with its own references.
        if (repo.revisions.has(child.value)) pending.push(child);
      }
    });
  }
}

/** A revision's metadata (read once per run); undefined when missing or unreadable. */
export async function metaOf(run: GcRun, repo: string, digest: Digest): Promise<ManifestMeta | undefined> {
  const id = revisionId(repo, digest);
  if (!run.metas.has(id)) run.metas.set(id, await readJson<ManifestMeta>(run.storage, manifestRevision(repo, digest)).catch(() => undefined));
  return run.metas.get(id);
}
