/**
 * The all-in-one server's periodic verify (`registrykit.verify`): one
 * {@link verifyBlobs} run per interval, its findings and summary logged
 * through the server's log hook. The next run is scheduled when the previous
 * one ends, so runs never overlap on a slow store.
 *
 * @module
 */
import type { LogHook } from "../../http/log.js";
import { verifyBlobs } from "../../registry/stores/base/verify.js";
import type { StorageDriver } from "../../storage/driver.js";
import type { VerifyScheduleConfig } from "../config/config-verify.js";
import { startPeriodic, type Periodic } from "./periodic.js";

/** A running schedule. */
export type PeriodicVerify = Periodic;

/** Start verifying `storage` every `config.intervalMs`, the first run one interval from now. */
export function startPeriodicVerify(storage: StorageDriver, config: VerifyScheduleConfig, log: LogHook): PeriodicVerify {
  // verifyBlobs logs each mismatch, quarantine and unreadable blob, and the summary.
  return startPeriodic("verify", config.intervalMs, async (signal) => {
    await verifyBlobs(storage, { quarantine: config.quarantine, concurrency: config.concurrency, signal, log });
  }, log);
}
