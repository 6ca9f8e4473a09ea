/**
 * Walk storage into the run's model: repositories with their revisions, tags
 * and uploads, and which repositories link which blob.
 *
 * @module
 */
import type { StorageDriver } from "../../../../storage/driver.js";
import { parseKey, tagLink, tagsPrefix } from "../layout.js";
import { eachKey, mapLimited, readText } from "../storage-io.js";
import { addLink, CONCURRENCY, repository, type GcRun } from "./state.js";

/** One pass over every repository key, then every tag read to the digest it points at. */
export async function scanRepositories(run: GcRun): Promise<void> {
  for await (const key of eachKey(run.storage, "repositories")) {
    const parsed = parseKey(key);
    if (!("name" in parsed)) continue;
    const repo = repository(run, parsed.name);
    if (parsed.kind === "manifestRevision") repo.revisions.set(parsed.digest.value, parsed.digest);
    else if (parsed.kind === "tagLink") repo.tags.set(parsed.tag, "");
    else if (parsed.kind === "layerLink") addLink(run, parsed.digest.value, parsed.name);
    else if (parsed.kind === "uploadData") repo.uploads.push(parsed.uuid);
  }
  run.report.repositories = run.repos.size;

  for (const repo of run.repos.values()) {
    const tags = [...repo.tags.keys()];
    const values = await mapLimited(tags, CONCURRENCY, (tag) => readText(run.storage, tagLink(repo.name, tag)));
    tags.forEach((tag, i) => {
      const value = values[i]?.trim();
      if (value) repo.tags.set(tag, value);
      else repo.tags.delete(tag);
    });
    run.report.manifests.scanned += repo.revisions.size;
  }
}

/**
 * The digests every tag of `repo` points at now (read again, for the checks
 * around a removal), leaving out the tags `retired` names (`<repo>:<tag>`:
 * those a dry run's retention would have removed).
 */
export async function currentTags(storage: StorageDriver, repo: string, retired: ReadonlySet<string> = new Set()): Promise<Set<string>> {
  const keys: string[] = [];
  for await (const key of eachKey(storage, tagsPrefix(repo))) {
    const parsed = parseKey(key);
    if (!(parsed.kind === "tagLink" && retired.has(`${repo}:${parsed.tag}`))) keys.push(key);
  }
  const values = await mapLimited(keys, CONCURRENCY, (key) => readText(storage, key));
  return new Set(values.flatMap((v) => (v === undefined ? [] : [v.trim()])));
}
