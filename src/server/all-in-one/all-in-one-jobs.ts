/**
 * The periodic jobs of the all-in-one server: the blob verify
 * (`registrykit.verify`) and the purge of abandoned uploads
 * (`storage.maintenance.uploadpurging`), each when configured.
 *
 * @module
 */
import type { LogHook } from "../../http/log.js";
import { removeAbandonedUploads } from "../../registry/index.js";
import type { StorageDriver } from "../../storage/driver.js";
import type { AllInOneConfig } from "../config/config-types.js";
import { startPeriodic, type Periodic } from "../jobs/periodic.js";
import { startPeriodicVerify } from "../jobs/verify-schedule.js";

/** Start the jobs `config` asks for; `stop()` stops them all (the verify first). */
export function startJobs(storage: StorageDriver, config: Pick<AllInOneConfig, "verify" | "uploads">, log: LogHook): Periodic {
  const periodicVerify = config.verify ? startPeriodicVerify(storage, config.verify, log) : undefined;
  const uploadPurge = startUploadPurge(storage, config.uploads, log);
  return {
    stop: async () => {
      await periodicVerify?.stop();
      await uploadPurge?.stop();
    },
  };
}

/** The upload purge, when on; logged only when it found something. */
function startUploadPurge(storage: StorageDriver, uploads: AllInOneConfig["uploads"], log: LogHook): Periodic | undefined {
  const purge = uploads.purge;
  if (!purge) return undefined;
  // At start too: it removes what a crash left behind as soon as it is old enough.
  return startPeriodic("upload purge", purge.intervalMs, async (signal) => {
    const report = await removeAbandonedUploads(storage, { idleSeconds: uploads.idleSeconds, dryRun: purge.dryRun, signal, log });
    if (report.removed.length > 0 || report.staleIndexEntries > 0) {
      log({ level: "info", msg: purge.dryRun ? "upload purge (dry run)" : "upload purge", removed: report.removed.length, bytes: report.bytes, staleIndexEntries: report.staleIndexEntries });
    }
  }, log, true);
}
