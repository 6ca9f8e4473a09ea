/**
 * Periodic health checks with a failure threshold, as Distribution's `health`
 * section runs them: each check is polled every `intervalMs`; with a
 * `threshold` of N > 0 it is failing once N polls in a row have failed (and
 * healthy again at the first success), with 0 it is failing whenever its last
 * poll failed. A check starts healthy and is first polled one interval after
 * it is added. Runtime-neutral: timers only.
 *
 * @module
 */

/** One check of {@link HealthChecks.add}. */
export interface HealthCheckOptions {
  /** The name it is reported under, e.g. `storagedriver_filesystem`. */
  name: string;
  /** Resolves when healthy; rejects (its message is reported) when not. */
  check: () => Promise<void>;
  /** Milliseconds between polls. Default 10 000 (Distribution's default). */
  intervalMs?: number;
  /** Consecutive failed polls before the check reports failing; 0 (the default) reports the first. */
  threshold?: number;
  /** A poll that has not settled after this many milliseconds fails. Default `intervalMs`. */
  timeoutMs?: number;
}

/** A set of polled checks. */
export interface HealthChecks {
  /** Add a check and start polling it. Names must be unique. */
  add(options: HealthCheckOptions): void;
  /** Whether no check is failing; cheap enough to ask on every request. */
  readonly healthy: boolean;
  /** The failing checks: name → the message of the last failure. Empty when healthy. */
  failing(): Record<string, string>;
  /** Poll every check once now (a poll already running is awaited instead) and resolve when done. */
  pollNow(): Promise<void>;
  /** Stop polling (a poll in progress finishes unobserved). */
  stop(): void;
}

interface CheckState {
  options: HealthCheckOptions;
  threshold: number;
  timeoutMs: number;
  failures: number;
  lastError: string | undefined;
  running: Promise<void> | undefined;
  timer: ReturnType<typeof setInterval> | undefined;
}

/** Create an empty set of {@link HealthChecks}. */
export function createHealthChecks(): HealthChecks {
  const checks = new Map<string, CheckState>();
  let failingCount = 0;
  let stopped = false;

  const isFailing = (s: CheckState): boolean => s.lastError !== undefined && s.failures >= Math.max(1, s.threshold);

  function record(s: CheckState, error: string | undefined): void {
    const before = isFailing(s);
    if (error === undefined) s.failures = 0;
    else if (s.failures < Math.max(1, s.threshold)) s.failures++;
    s.lastError = error;
    const after = isFailing(s);
    if (before !== after) failingCount += after ? 1 : -1;
  }

  function poll(s: CheckState): Promise<void> {
    if (stopped) return Promise.resolve();
    s.running ??= runOnce(s).finally(() => {
      s.running = undefined;
    });
    return s.running;
  }

  async function runOnce(s: CheckState): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`health check timed out after ${s.timeoutMs} ms`)), s.timeoutMs);
    });
    try {
      await Promise.race([s.options.check(), timeout]);
      if (!stopped) record(s, undefined);
    } catch (error) {
      if (!stopped) record(s, error instanceof Error ? error.message : String(error));
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    add(options) {
      if (checks.has(options.name)) throw new TypeError(`health check ${JSON.stringify(options.name)} is already registered`);
      const intervalMs = options.intervalMs ?? 10_000;
      const threshold = options.threshold ?? 0;
      if (!(intervalMs > 0)) throw new RangeError("health check interval must be positive");
      if (!(Number.isSafeInteger(threshold) && threshold >= 0)) throw new RangeError("health check threshold must be a whole number, 0 or more");
      const s: CheckState = { options, threshold, timeoutMs: options.timeoutMs ?? intervalMs, failures: 0, lastError: undefined, running: undefined, timer: undefined };
      checks.set(options.name, s);
      if (stopped) return;
      s.timer = setInterval(() => void poll(s), intervalMs);
      // A health timer must not keep a Node process alive on its own.
      (s.timer as { unref?: () => void }).unref?.();
    },
    get healthy() {
      return failingCount === 0;
    },
    failing() {
      const out: Record<string, string> = {};
      for (const [name, s] of checks) if (isFailing(s)) out[name] = s.lastError!;
      return out;
    },
    async pollNow() {
      await Promise.all([...checks.values()].map(poll));
    },
    stop() {
      stopped = true;
      for (const s of checks.values()) clearInterval(s.timer);
    },
  };
}
