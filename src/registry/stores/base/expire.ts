/**
 * Eviction of cached content: `expireCachedTags` removes the tags of proxied
 * repositories nobody pulled for a while; a garbage collection with
 * `removeUntagged` then removes the manifests and blobs no tag reaches any
 * more. A cached tag link's modification time is when it was fetched or last
 * confirmed upstream (manifests.ts), and a pull after the ttl confirms it, so
 * a link older than `olderThanSeconds` was not pulled for at least
 * `olderThanSeconds - ttl`.
 *
 * @module
 */
import type { LogHook } from "../../../http/log.js";
import { checked, type StorageDriver } from "../../../storage/driver.js";
import { parseKey, repositoriesUnder } from "./layout.js";
import { eachKey } from "./storage-io.js";

/** Options of {@link expireCachedTags}. */
export interface ExpireCachedTagsOptions {
  /** The proxied prefixes (the `prefix` of each upstream; `""` for all repositories). */
  prefixes: readonly string[];
  /** Remove tag links last fetched or confirmed longer ago than this. */
  olderThanSeconds: number;
  /** Report, remove nothing. Default false. */
  dryRun?: boolean;
  /** Receives one `info` event per removed tag. */
  log?: LogHook;
  /** The clock (tests). Default `() => new Date()`. */
  now?: () => Date;
}

/** What {@link expireCachedTags} did: `repository:tag` of each expired tag. */
export interface ExpireCachedTagsReport {
  /** `repository:tag` of every tag removed. */
  expired: string[];
}

/**
 * Remove the tags under the proxied `prefixes` that were not fetched or
 * confirmed upstream for `olderThanSeconds`. Local repositories (no prefix
 * covers them) are never touched. Follow with
 * `collectGarbage(storage, { removeUntagged: true })` to free their content.
 */
export async function expireCachedTags(driver: StorageDriver, options: ExpireCachedTagsOptions): Promise<ExpireCachedTagsReport> {
  if (!(Number.isFinite(options.olderThanSeconds) && options.olderThanSeconds >= 0)) throw new TypeError("olderThanSeconds must be a number >= 0");
  const storage = checked(driver);
  const cutoff = (options.now ?? (() => new Date()))().getTime() - options.olderThanSeconds * 1000;
  const report: ExpireCachedTagsReport = { expired: [] };
  // "" covers everything: one walk over all repositories is enough.
  const prefixes = options.prefixes.includes("") ? [""] : [...new Set(options.prefixes)];
  for (const prefix of prefixes) {
    for await (const key of eachKey(storage, repositoriesUnder(prefix))) {
      const parsed = parseKey(key);
      if (parsed.kind !== "tagLink" || !parsed.name.startsWith(prefix)) continue;
      const info = await storage.stat(key);
      if (!info || info.modified.getTime() >= cutoff) continue;
      if (!options.dryRun) await storage.delete(key);
      report.expired.push(`${parsed.name}:${parsed.tag}`);
      options.log?.({ level: "info", msg: options.dryRun ? "would expire cached tag" : "expired cached tag", repository: parsed.name, tag: parsed.tag });
    }
  }
  return report;
}
