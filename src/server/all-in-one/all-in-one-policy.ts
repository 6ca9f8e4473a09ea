/**
 * Policies and lifecycle in the all-in-one server: the write policies the
 * configuration asks for (`registrykit.policy`), and the scheduled garbage
 * collection (`registrykit.gc`) with the retention rules
 * (`registrykit.retention`), reported in the log and, with Prometheus on, in
 * `registrykit_gc_*` metrics.
 *
 * @module
 */
import type { LogHook } from "../../http/log.js";
import { collectGarbage, immutableTags, quota, type GcReport, type ImmutableTags, type Quota, type WritePolicy } from "../../registry/index.js";
import type { StorageDriver } from "../../storage/driver.js";
import type { Metrics } from "../../util/metrics.js";
import type { AllInOneConfig } from "../config/config-types.js";
import { startPeriodic, type Periodic } from "../jobs/periodic.js";

/** The configured policies, each kept by kind for whoever needs more than the check. */
export interface ConfiguredPolicies {
  /** Every policy, for `createRegistry({ policies })`. */
  all: WritePolicy[];
  /** `registrykit.policy.immutabletags`: retention and repository deletes ask it. */
  immutable?: ImmutableTags;
  /** `registrykit.policy.quotas`: the management API reports its usage. */
  quota?: Quota;
}

/** Build the write policies of `config`. */
export function configuredPolicies(config: Pick<AllInOneConfig, "policy">, log: LogHook): ConfiguredPolicies {
  const immutable = config.policy?.immutableTags ? immutableTags(config.policy.immutableTags) : undefined;
  const quotas = config.policy?.quotas ? quota(config.policy.quotas, { log }) : undefined;
  return {
    all: [...(immutable ? [immutable] : []), ...(quotas ? [quotas] : [])],
    ...(immutable ? { immutable } : {}),
    ...(quotas ? { quota: quotas } : {}),
  };
}

/** The options of one garbage collection as `config` sets them (the `gc` command and the schedule). */
export function gcSettings(config: Pick<AllInOneConfig, "retention">, policies: ConfiguredPolicies): { retention?: AllInOneConfig["retention"]; protectTag?: (repository: string, tag: string) => boolean } {
  return {
    ...(config.retention ? { retention: config.retention } : {}),
    ...(policies.immutable ? { protectTag: policies.immutable.protects } : {}),
  };
}

/**
 * Run garbage collection every `registrykit.gc.interval` (the first run one
 * interval after start). Safe beside pushes, as `collectGarbage` is.
 */
export function startScheduledGc(storage: StorageDriver, config: Pick<AllInOneConfig, "gc" | "retention">, policies: ConfiguredPolicies, log: LogHook, metrics?: Metrics): Periodic | undefined {
  const gc = config.gc;
  if (!gc) return undefined;
  const record = metrics ? gcMetrics(metrics) : undefined;
  return startPeriodic("scheduled gc", gc.intervalMs, async () => {
    const started = Date.now();
    let report: GcReport;
    try {
      report = await collectGarbage(storage, {
        dryRun: gc.dryRun, removeUntagged: gc.removeUntagged, gracePeriodSeconds: gc.gracePeriodSeconds, ...gcSettings(config, policies),
      });
    } catch (error) {
      record?.failed();
      throw error;
    }
    const seconds = (Date.now() - started) / 1000;
    record?.done(report, seconds);
    log({
      level: "info", msg: gc.dryRun ? "scheduled gc (dry run)" : "scheduled gc", seconds,
      tags: report.tags.removed.length, manifests: report.manifests.removed.length, blobs: report.blobs.removed.length,
      uploads: report.uploads.removed.length, bytes: report.bytesFreed,
    });
  }, log);
}

/** The `registrykit_gc_*` families (docs/metrics.md). */
function gcMetrics(metrics: Metrics) {
  const runs = metrics.counter("registrykit_gc_runs_total", "Scheduled garbage collections, by result (ok, failed)", ["result"]);
  const removed = metrics.counter("registrykit_gc_removed_total", "Objects scheduled garbage collections removed (or would, dry run), by kind (tag, manifest, blob, upload)", ["kind"]);
  const freed = metrics.counter("registrykit_gc_freed_bytes_total", "Bytes scheduled garbage collections freed (or would, dry run)").labels();
  const last = metrics.gauge("registrykit_gc_last_success_timestamp_seconds", "When the last scheduled garbage collection ended without error, seconds since the epoch").labels();
  const duration = metrics.gauge("registrykit_gc_last_duration_seconds", "How long the last successful scheduled garbage collection took").labels();
  // Every series exists from the start, so a dashboard sees zeros rather than nothing.
  for (const kind of ["tag", "manifest", "blob", "upload"]) removed.labels(kind);
  runs.labels("ok");
  runs.labels("failed");
  return {
    failed: () => runs.labels("failed").inc(),
    done: (report: GcReport, seconds: number) => {
      runs.labels("ok").inc();
      removed.labels("tag").inc(report.tags.removed.length);
      removed.labels("manifest").inc(report.manifests.removed.length);
      removed.labels("blob").inc(report.blobs.removed.length);
      removed.labels("upload").inc(report.uploads.removed.length);
      freed.inc(report.bytesFreed);
      last.set(Date.now() / 1000);
      duration.set(seconds);
    },
  };
}
