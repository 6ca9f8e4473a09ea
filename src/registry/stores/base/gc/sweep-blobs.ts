/**
 * The blob sweep, in two steps around a last mark, so that a manifest PUT
 * racing the run never keeps a reference to a blob the run deletes, whatever
 * the grace period:
 *
 * 1. **Unlink** (`unlinkBlobs`): each blob no kept manifest references, and
 *    neither it nor a link to it younger than the grace period, is unlinked
 *    from every repository linking it. It stops being visible, so a manifest
 *    PUT checking its references from now on gets `MANIFEST_BLOB_UNKNOWN`.
 * 2. The caller marks again (a listing of every revision and link).
 * 3. **Aside** (`removeBlobs`): a blob a revision found by that listing
 *    references gets its links back and stays; one linked again meanwhile (an
 *    upload, a mount) or with fresh bytes stays; the others' bytes are moved
 *    aside (`gc-trash/`), out of every reader's sight.
 * 4. **Settle**: every revision and link is listed once more; bytes something
 *    references or links now go back, the rest are deleted.
 *
 * A manifest PUT stores its revision and then checks its references again
 * (`putManifest`). Either that check runs before the unlink, and then the
 * revision was stored before the last mark lists revisions, which sees it;
 * or it runs after, sees the link gone and refuses the PUT. The same check
 * also asks for the blobs' bytes: a blob linked again by an upload that
 * finished just before its bytes went aside is either found by step 4's
 * listing (the PUT's revision came first) or refused by that check. A mount
 * checks its source link again after linking, the same way.
 *
 * @module
 */
import { tryParseDigest, type Digest } from "../../../../oci/digest.js";
import { StorageError, type ObjectInfo, type StorageDriver } from "../../../../storage/driver.js";
import { GC_TRASH_PREFIX, blobData, layerLink, parseKey, trashedBlob } from "../layout.js";
import { eachEntry, eachKey, mapLimited } from "../storage-io.js";
import { markNewRevisions } from "./mark.js";
import { CONCURRENCY, type GcRun } from "./state.js";

/** A blob the first step unlinked (in a dry run: would have). */
export interface Unlinked {
  digest: Digest;
  key: string;
  info: ObjectInfo;
  /** The repositories whose link to it existed and went. */
  links: string[];
}

/** Step 1: unlink every blob nothing kept references and nothing protects; what was unlinked. */
export async function unlinkBlobs(run: GcRun): Promise<Unlinked[]> {
  const candidates: { digest: Digest; key: string; listed: ObjectInfo | undefined }[] = [];
  for await (const { key, info } of eachEntry(run.storage, "blobs")) {
    const parsed = parseKey(key);
    if (parsed.kind !== "blobData") continue;
    run.report.blobs.scanned++;
    if (!run.markedBlobs.has(parsed.digest.value)) candidates.push({ digest: parsed.digest, key, listed: info });
  }
  const unlinked = await mapLimited(candidates, CONCURRENCY, (c) => unlinkBlob(run, c.digest, c.key, c.listed));
  return unlinked.filter((u): u is Unlinked => u !== undefined);
}

/**
 * Unlink one unreferenced blob unless it or a link to it is fresh. `listed` is
 * what the blob listing said of it, when the driver said (S3): that saves a
 * HEAD per blob. It is as good as a `stat` for the grace period, because a
 * blob pushed again after the listing also gets a fresh link (stat'ed here,
 * live) and fresh bytes (stat'ed again before they go).
 */
async function unlinkBlob(run: GcRun, digest: Digest, key: string, listed: ObjectInfo | undefined): Promise<Unlinked | undefined> {
  const { storage } = run;
  const info = listed ?? (await storage.stat(key));
  if (!info) return undefined;
  const linkedIn = run.links.get(digest.value) ?? [];
  const linkInfos = await Promise.all(linkedIn.map((repo) => storage.stat(layerLink(repo, digest))));
  if (run.fresh(info.modified) || linkInfos.some((l) => run.fresh(l?.modified))) {
    run.report.blobs.protected++;
    return undefined;
  }
  const links = linkedIn.filter((_, i) => linkInfos[i] !== undefined);
  // Links first: the blob stops being visible before its bytes go.
  if (!run.dryRun) for (const repo of links) await storage.delete(layerLink(repo, digest));
  return { digest, key, info, links };
}

/**
 * Step 3, after the last mark: put back the links of the blobs it found
 * referenced, keep those `linkedAgain` names or whose bytes are fresh, and
 * move the rest's bytes aside; then step 4 ({@link settleTrash}); then links
 * left to blobs that no longer exist.
 */
export async function removeBlobs(run: GcRun, unlinked: readonly Unlinked[], linkedAgain: ReadonlySet<string>): Promise<void> {
  const aside: Unlinked[] = [];
  await mapLimited(unlinked, CONCURRENCY, async (u) => {
    if (await moveAside(run, u, linkedAgain)) aside.push(u);
  });
  const removed = await settleTrash(run, aside);
  await removeDanglingLinks(run, removed);
}

/** Whether `u`'s bytes went aside (in a dry run: would have). */
async function moveAside(run: GcRun, u: Unlinked, linkedAgain: ReadonlySet<string>): Promise<boolean> {
  const { storage, dryRun, report } = run;
  const { digest, key, links } = u;
  if (dryRun) return true;
  if (run.markedBlobs.has(digest.value)) {
    await restoreLinks(run, digest, links);
    return false;
  }
  // Linked again meanwhile (an upload or a mount), or pushed again (an upload moved fresh bytes in).
  if (linkedAgain.has(digest.value) || run.fresh((await storage.stat(key))?.modified)) {
    report.blobs.protected++;
    return false;
  }
  try {
    await storage.move(key, trashedBlob(digest));
  } catch (error) {
    if (error instanceof StorageError && error.code === "not_found") return false;
    throw error;
  }
  return true;
}

/** A manifest stored while the run went on references the blob: it keeps it as it was. */
async function restoreLinks(run: GcRun, digest: Digest, links: readonly string[]): Promise<void> {
  for (const repo of links) await run.storage.write(layerLink(repo, digest), new TextEncoder().encode(digest.value));
  run.log({ level: "warn", msg: "gc kept a blob a manifest pushed while it ran references", digest: digest.value });
  run.report.blobs.protected++;
}

/**
 * Step 4: the bytes moved aside are looked for once more. A manifest PUT
 * checks that its blobs' bytes exist after storing its revision (and is
 * refused when they do not), so a PUT that passed before a blob went aside
 * stored its revision before this listing, which finds it: the bytes go back.
 * Bytes nothing references or links now are deleted. The digests deleted.
 */
async function settleTrash(run: GcRun, aside: readonly Unlinked[]): Promise<Set<string>> {
  const { storage, dryRun, report } = run;
  const linkedNow = aside.length > 0 && !dryRun ? await markNewRevisions(run) : new Set<string>();
  const removed = new Set<string>();
  await mapLimited(aside, CONCURRENCY, async (u) => {
    const { digest, key, info, links } = u;
    if (!dryRun) {
      if (run.markedBlobs.has(digest.value) || linkedNow.has(digest.value)) {
        await putBack(storage, digest, key);
        if (run.markedBlobs.has(digest.value)) await restoreLinks(run, digest, links);
        else report.blobs.protected++;
        return;
      }
      await storage.delete(trashedBlob(digest));
    }
    removed.add(digest.value);
    report.blobs.linksRemoved += links.length;
    report.blobs.removed.push(digest.value);
    report.blobs.bytes += info.size;
    run.log({ level: "info", msg: dryRun ? "gc would remove blob" : "gc removed blob", digest: digest.value, size: info.size });
  });
  return removed;
}

/** Move bytes set aside back, unless an upload has put the same bytes in place meanwhile. */
async function putBack(storage: StorageDriver, digest: Digest, key: string): Promise<void> {
  if (await storage.stat(key)) await storage.delete(trashedBlob(digest));
  else await storage.move(trashedBlob(digest), key);
}

/**
 * Bytes a killed run left aside go back before anything else, so that this
 * run decides about them afresh (and a blob a push relied on is served again).
 */
export async function recoverTrash(run: GcRun): Promise<void> {
  if (run.dryRun) return;
  for await (const key of eachKey(run.storage, GC_TRASH_PREFIX)) {
    const [, algorithm, hex] = key.split("/");
    const digest = tryParseDigest(`${algorithm}:${hex}`);
    if (!digest || key !== trashedBlob(digest)) continue;
    await putBack(run.storage, digest, blobData(digest));
  }
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
