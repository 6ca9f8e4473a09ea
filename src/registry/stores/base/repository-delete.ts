/**
 * Deleting a whole repository, and taking an emptied one out of the catalog.
 *
 * A repository's objects are its tags, manifest revisions, referrers index,
 * blob links and uploads, each under its own `_`-prefixed folder (layout.ts),
 * so a nested repository (`a/b` under `a`) is never touched. Blob bytes are
 * shared by every repository: they stay, and garbage collection removes the
 * ones nothing references any more.
 *
 * @module
 */
import { eventEmitter, type EventHook } from "../../../events/hook.js";
import { silent, type LogHook } from "../../../http/log.js";
import { checked, type StorageDriver } from "../../../storage/driver.js";
import { RegistryError } from "../../../oci/errors.js";
import { catalogEntry, parseKey, revisionsPrefix, tagsPrefix } from "./layout.js";
import { isValidName } from "../../names.js";
import { allPolicies, checkedCommit, type WritePolicy } from "../../policy/write-policy.js";
import { eachKey, ensureRepository, exists } from "./storage-io.js";
import type { DeleteRepositoryOptions, DeleteRepositoryReport } from "../types.js";

export type { DeleteRepositoryOptions, DeleteRepositoryReport };

/** The folders of one repository's objects, in the order they are removed: tags first, so pulls by tag stop at once. */
const FOLDERS = ["_manifests/tags", "_manifests", "_referrers", "_layers", "_uploads"] as const;

/**
 * Delete repository `name`: its tags, manifests, referrers, blob links and
 * uploads, and its catalog entry. Blobs go with the next garbage collection.
 * A policy refusal throws the 403 `DENIED` {@link RegistryError}; an invalid
 * name throws `NAME_INVALID`. A push racing the delete may leave what it wrote
 * (the repository then reappears in the catalog with it).
 *
 * @example
 * ```ts
 * const report = await deleteRepository(storage, "team-a/old-app");
 * // { repository: "team-a/old-app", found: true, tags: 3, manifests: 5, links: 12, uploads: 0 }
 * ```
 */
export async function deleteRepository(driver: StorageDriver, name: string, options: DeleteRepositoryOptions = {}): Promise<DeleteRepositoryReport> {
  if (!isValidName(name)) throw new RegistryError("NAME_INVALID", "invalid repository name", 400, { name: name.slice(0, 300) });
  const storage = checked(driver);
  const base = repositoryBase(name);
  const counts = { tags: 0, manifests: 0, links: 0, uploads: 0 };
  const tags: string[] = [];
  for await (const key of eachKey(storage, tagsPrefix(name))) {
    const parsed = parseKey(key);
    if (parsed.kind === "tagLink") tags.push(parsed.tag);
  }
  const policies = options.force ? [] : options.policies ?? [];
  const policy = policies.length === 0 ? undefined : allPolicies(policies);
  const found = (await exists(storage, catalogEntry(name))) || (await hasAny(storage, base));
  if (found) {
    await checkedCommit(policy, storage, async () => ({ action: "deleteRepository", repository: name, tags, caller: options.caller }), async () => {
      for (const folder of FOLDERS) {
        for await (const key of eachKey(storage, `${base}/${folder}`)) {
          const kind = parseKey(key).kind;
          if (kind === "tagLink") counts.tags++;
          else if (kind === "manifestRevision") counts.manifests++;
          else if (kind === "layerLink") counts.links++;
          else if (kind === "uploadData") counts.uploads++;
        }
        await storage.deletePrefix(`${base}/${folder}`);
      }
      await storage.delete(catalogEntry(name));
    });
  }
  const report: DeleteRepositoryReport = { repository: name, found, ...counts };
  const log = options.log ?? silent;
  log({ level: "info", msg: "repository deleted", ...report });
  if (found) {
    const parts = { action: "repository.emptied", target: { repository: name, report: counts } } as const;
    await eventEmitter({ onEvent: options.onEvent, log })(undefined, options.caller ? { ...parts, actor: options.caller } : parts);
  }
  return report;
}

/** Whether any object lies in one of the repository's own folders. */
async function hasAny(storage: StorageDriver, base: string): Promise<boolean> {
  for (const folder of FOLDERS) if ((await storage.list(`${base}/${folder}`, { limit: 1 })).keys.length > 0) return true;
  return false;
}

/**
 * Whether repository `name` still holds any object (a tag, manifest, referrer,
 * blob link or upload). An emptied repository leaves the catalog but keeps its
 * blob links until garbage collection; until then it still answers `tags/list`.
 */
export function repositoryHasObjects(storage: StorageDriver, name: string): Promise<boolean> {
  return hasAny(storage, repositoryBase(name));
}

function repositoryBase(name: string): string {
  return tagsPrefix(name).slice(0, -"/_manifests/tags".length);
}

/**
 * Take `name` out of the catalog when it holds no manifest any more (after a
 * delete by digest, or garbage collection). A push that stores a manifest
 * meanwhile puts the entry back: it is checked again after the removal.
 * Resolves to whether the entry was removed.
 */
export async function forgetIfEmpty(storage: StorageDriver, name: string): Promise<boolean> {
  const empty = async () => (await storage.list(revisionsPrefix(name), { limit: 1 })).keys.length === 0;
  if (!(await empty()) || !(await exists(storage, catalogEntry(name)))) return false;
  await storage.delete(catalogEntry(name));
  if (await empty()) return true;
  await ensureRepository(storage, name);
  return false;
}
