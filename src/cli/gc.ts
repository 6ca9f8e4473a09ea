/**
 * `registry-kit gc [--dry-run] [--remove-untagged] [--grace-period=SECONDS] [--expire-cached=SECONDS] [CONFIG]`:
 * one garbage collection over the storage `serve` uses with the same CONFIG
 * and environment (see docs/gc.md). Safe while the server runs.
 *
 * @module
 */
import { collectGarbage, type GcReport } from "../registry/stores/base/gc/index.js";
import { expireCachedTags } from "../registry/index.js";
import { describeStorage, openStorage } from "../server/all-in-one/all-in-one.js";
import { formatBytes, loadCommandConfig } from "./command-support.js";
import { configuredPolicies, gcSettings } from "../server/all-in-one/all-in-one-policy.js";
import type { AllInOneConfig } from "../server/config/config.js";
import type { CliIo } from "./io.js";

export const GC_USAGE = `Usage: registry-kit gc [--dry-run] [--remove-untagged] [--grace-period=SECONDS] [--expire-cached=SECONDS] [CONFIG]

Removes the blobs no manifest references and uploads abandoned for longer
than 7 days from the storage that \`registry-kit serve [CONFIG]\` uses (same
CONFIG, same environment). Safe while the server runs. The retention rules of
CONFIG (registrykit.retention) remove tags first, never an immutable one
(registrykit.policy.immutabletags); --dry-run lists what they would remove.

  --dry-run            report what would be removed, remove nothing
  --remove-untagged    also remove manifests no tag references (index children
                       and referrers of kept manifests stay)
  --grace-period=S     never remove anything younger than S seconds (default 3600)
  --expire-cached=S    first remove the tags of pull-through repositories (proxy,
                       registrykit.proxy) not fetched or confirmed upstream for S
                       seconds; implies --remove-untagged`;

/** Run the `gc` command; resolves to the exit code. */
export async function gcCommand(args: string[], io: CliIo): Promise<number> {
  let dryRun = false;
  let removeUntagged = false;
  let gracePeriodSeconds = 3600;
  let expireCachedSeconds: number | undefined;
  const positional: string[] = [];
  for (const arg of args) {
    if (arg === "--dry-run" || arg === "-n") dryRun = true;
    else if (arg === "--remove-untagged") removeUntagged = true;
    else if (arg.startsWith("--grace-period=") && /^\d+$/.test(arg.slice("--grace-period=".length))) {
      gracePeriodSeconds = Number(arg.slice("--grace-period=".length));
    } else if (arg.startsWith("--expire-cached=") && /^\d+$/.test(arg.slice("--expire-cached=".length))) {
      expireCachedSeconds = Number(arg.slice("--expire-cached=".length));
      removeUntagged = true;
    } else if (arg === "--help" || arg === "-h") {
      io.out(GC_USAGE);
      return 0;
    } else if (arg.startsWith("-")) {
      io.err(GC_USAGE);
      return 2;
    } else positional.push(arg);
  }
  if (positional.length > 1) {
    io.err(GC_USAGE);
    return 2;
  }
  let config: AllInOneConfig;
  try {
    config = await loadCommandConfig(positional[0], io);
    if (expireCachedSeconds !== undefined && !config.proxy) {
      io.err("registry-kit gc: --expire-cached needs a pull-through cache in the configuration (proxy or registrykit.proxy)");
      return 1;
    }
    if (config.storage.driver === "inmemory") {
      io.err("registry-kit gc: the configured storage is inmemory; there is nothing to collect");
      return 1;
    }
  } catch (error) {
    io.err(`registry-kit gc: configuration error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }

  const storage = openStorage(config);
  let report: GcReport;
  try {
    if (expireCachedSeconds !== undefined && config.proxy) {
      const prefixes = config.proxy.map((u) => u.prefix);
      const expired = await expireCachedTags(storage, { prefixes, olderThanSeconds: expireCachedSeconds, dryRun });
      for (const tag of expired.expired) io.out(`${dryRun ? "would expire" : "expired"} cached tag ${tag}`);
    }
    // The retention rules and the immutable tags of the configuration apply, as in the server's scheduled GC.
    report = await collectGarbage(storage, { dryRun, removeUntagged, gracePeriodSeconds, ...gcSettings(config, configuredPolicies(config, () => {})) });
  } catch (error) {
    io.err(`registry-kit gc: failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await storage.close?.();
  }
  for (const line of reportLines(report, describeStorage(config.storage))) io.out(line);
  return 0;
}

/** The report as printed: one line per removal, then a summary. */
export function reportLines(report: GcReport, where: string): string[] {
  const verb = report.dryRun ? "would remove" : "removed";
  const lines = [`registry-kit gc${report.dryRun ? " (dry run)" : ""}: ${where}`];
  for (const t of report.tags.removed) lines.push(`${verb} tag ${t}`);
  for (const m of report.manifests.removed) lines.push(`${verb} manifest ${m}`);
  for (const b of report.blobs.removed) lines.push(`${verb} blob ${b}`);
  for (const u of report.uploads.removed) lines.push(`${verb} upload ${u}`);
  lines.push(
    `repositories ${report.repositories}, manifests scanned ${report.manifests.scanned}, blobs scanned ${report.blobs.scanned}, uploads scanned ${report.uploads.scanned}`,
    `${verb}: ${report.tags.removed.length} tags, ${report.manifests.removed.length} manifests, ${report.blobs.removed.length} blobs (${report.blobs.linksRemoved} links), ` +
      `${report.uploads.removed.length} uploads; kept ${report.blobs.protected} unreferenced blobs younger than the grace period`,
    `bytes ${report.dryRun ? "that would be freed" : "freed"}: ${report.bytesFreed} (${formatBytes(report.bytesFreed)})`,
  );
  return lines;
}
