/**
 * A task the all-in-one server runs every so often (the blob verify, the
 * purge of abandoned uploads): the next run is scheduled when the previous one
 * ends, so runs never overlap on a slow store, and `stop()` aborts a run in
 * progress. Timers do not keep the process alive.
 *
 * @module
 */
import type { LogHook } from "../../http/log.js";

/** A running schedule. */
export interface Periodic {
  /** Cancel the next run, abort the one in progress, and resolve once nothing runs. */
  stop(): Promise<void>;
}

/** setTimeout's limit; a longer interval is slept in pieces. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Run `task` every `intervalMs` (the first run one interval from now, or at
 * once with `runAtStart`); a failure is logged as `<name> failed` and the
 * schedule goes on.
 */
export function startPeriodic(
  name: string,
  intervalMs: number,
  task: (signal: AbortSignal) => Promise<void>,
  log: LogHook,
  runAtStart = false,
): Periodic {
  const controller = new AbortController();
  const { signal } = controller;
  const loop = (async () => {
    let first = runAtStart;
    while (first || (await sleep(intervalMs, signal))) {
      first = false;
      try {
        await task(signal);
      } catch (error) {
        if (signal.aborted) break;
        log({ level: "error", msg: `${name} failed`, error: error instanceof Error ? error.message : String(error) });
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

/** Wait `ms`; resolves to false as soon as `signal` aborts. */
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
