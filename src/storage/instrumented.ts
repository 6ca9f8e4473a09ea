/**
 * A storage driver that reports the latency of every operation and its
 * failures into a {@link Metrics}:
 *
 * - `registry_storage_action_seconds{driver,action}` (histogram, Distribution's
 *   name and labels; `action` is the contract method: `stat`, `read`, `write`,
 *   `append`, `move`, `delete`, `deletePrefix`, `list`);
 * - `registrykit_storage_errors_total{driver,action,code}` (counter; `code` is
 *   the {@link StorageError} code, `other` for anything else). `not_found`
 *   from `move` counts; a missing object from `stat`/`read` is an answer, not
 *   an error.
 *
 * `read` is timed until the stream is handed out (the first bytes may still be
 * on their way), `write` and `append` until the body has been stored.
 *
 * @module
 */
import { DEFAULT_BUCKETS, type Metrics } from "../util/metrics.js";
import { StorageError, type StorageDriver } from "./driver.js";

const ACTIONS = ["stat", "read", "write", "append", "move", "delete", "deletePrefix", "list"] as const;

/**
 * Wrap `driver` so that every operation is measured into `metrics`, labelled
 * `driver="<driverLabel>"` (default `driver.name`; the all-in-one server uses
 * Distribution's driver names: `filesystem`, `inmemory`, `s3`). Methods
 * beyond the contract are reached through the wrapper unchanged; `close` is
 * passed through unmeasured.
 */
export function instrumentStorage(driver: StorageDriver, metrics: Metrics, driverLabel: string = driver.name): StorageDriver {
  const seconds = metrics.histogram(
    "registry_storage_action_seconds",
    "The number of seconds that the storage action takes",
    ["driver", "action"],
    DEFAULT_BUCKETS,
  );
  const errors = metrics.counter("registrykit_storage_errors_total", "Storage operations that failed, by storage error code", ["driver", "action", "code"]);
  const wrapped = Object.create(driver) as StorageDriver;
  const target = wrapped as unknown as Record<string, unknown>;
  for (const action of ACTIONS) {
    const original = driver[action] as (...args: unknown[]) => Promise<unknown>;
    const timer = seconds.labels(driverLabel, action);
    target[action] = async (...args: unknown[]): Promise<unknown> => {
      const start = performance.now();
      try {
        return await original.apply(driver, args);
      } catch (error) {
        errors.labels(driverLabel, action, error instanceof StorageError ? error.code : "other").inc();
        throw error;
      } finally {
        timer.observe((performance.now() - start) / 1000);
      }
    };
  }
  return wrapped;
}
