/**
 * The all-in-one server's periodic verify (`registrykit.verify`): one
 * {@link verifyBlobs} run per interval, its findings and summary logged
 * through the server's log hook. The next run is scheduled when the previous
 * one ends, so runs never overlap on a slow store.
 *
 * @module
 */
import type { LogHook } from "../http/log.js";
import { verifyBlobs } from "../registry/verify.js";
import type { StorageDriver } from "../storage/driver.js";
import type { VerifyScheduleConfig } from "./config-verify.js";

/** A running schedule. */
export interface PeriodicVerify {
  /** Cancel the next run, stop the one in progress (it logs `verify stopped`), and resolve once nothing runs. */
  stop(): Promise<void>;
}

/** setTimeout's limit; a longer interval is slept in pieces. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Start verifying `storage` every `config.intervalMs`, the first run one interval from now. */
export function startPeriodicVerify(storage: StorageDriver, config: VerifyScheduleConfig, log: LogHook): PeriodicVerify {
  const controller = new AbortController();
  const { signal } = controller;
  const loop = (async () => {
    while (await sleep(config.intervalMs, signal)) {
      try {
        // verifyBlobs logs each mismatch, quarantine and unreadable blob, and the summary.
        await verifyBlobs(storage, { quarantine: config.quarantine, concurrency: config.concurrency, signal, log });
      } catch (error) {
        log({ level: "error", msg: "verify failed", error: error instanceof Error ? error.message : String(error) });
      }
    }
  })();
  return {
    stop: async () => {
      controller.abort();
      await loop;
    },
  };
}

/** Wait `ms`; resolves to false as soon as `signal` aborts. The timer does not keep the process alive. */
async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  for (let left = ms; left > 0 && !signal.aborted; left -= MAX_TIMER_MS) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(left, MAX_TIMER_MS));
      timer.unref?.();
      signal.addEventListener("abort", done, { once: true });
    });
  }
  return !signal.aborted;
}
