/**
 * The observability of the all-in-one server: the metrics the services
 * report into (when `http.debug.prometheus.enabled`), the health checks
 * (`health.storagedriver`, `file`, `http`, `tcp`) with the gate that makes the API answer 503 while
 * one fails, and the handler of the debug listener (`/debug/health`,
 * `/debug/vars` and the metrics path). The debug handler is served on `http.debug.addr` by the CLI,
 * never on the main port.
 *
 * @module
 */
import { metricsHandler } from "../../http/metrics.js";
import type { LogHook } from "../../http/log.js";
import { healthGate, healthStatusHandler } from "../../registry/health.js";
import { storageHealthCheck } from "../../registry/stores/base/health-check.js";
import type { StorageDriver } from "../../storage/driver.js";
import { instrumentStorage } from "../../storage/instrumented.js";
import { createHealthChecks } from "../../util/health.js";
import { createMetrics, type Metrics } from "../../util/metrics.js";
import type { AllInOneConfig } from "../config/config-types.js";
import { fileCheck, httpCheck, tcpCheck } from "./health-checks.js";
import { processMetrics } from "./process-metrics.js";

/** What {@link observability} built. */
export interface Observability {
  /** The metrics the services report into; `undefined` when Prometheus is off. */
  metrics: Metrics | undefined;
  /** `storage`, measured into `metrics` when there are metrics. */
  storage: StorageDriver;
  /** Wrap the main handler in the health gate (unchanged without checks). */
  gate(handler: (request: Request) => Promise<Response>): (request: Request) => Promise<Response>;
  /** The debug listener's handler, when `http.debug.addr` is set. */
  debugHandler: ((request: Request) => Promise<Response>) | undefined;
  /** Start polling the health checks (after start-up succeeded). */
  start(): void;
  /** Stop polling. */
  stop(): void;
}

/**
 * `/debug/vars`, after Go's expvar page that Distribution's debug listener
 * serves: the command line and the process' memory (Node's
 * `process.memoryUsage()` in place of Go's memstats), plus the uptime.
 */
function debugVars(): Promise<Response> {
  const body = JSON.stringify({ cmdline: process.argv, memstats: process.memoryUsage(), uptime_seconds: Math.round(process.uptime()) });
  return Promise.resolve(new Response(body, { status: 200, headers: { "content-type": "application/json; charset=utf-8" } }));
}

/** Build the metrics, the health checks and the debug handler that `config` asks for. */
export function observability(config: AllInOneConfig, storage: StorageDriver, log: LogHook): Observability {
  const debug = config.http.debug;
  const metrics = debug?.prometheus ? createMetrics() : undefined;
  // process_* as on Distribution's page (Prometheus' Go client), nodejs_* for the heap and the event loop.
  const runtime = metrics ? processMetrics(metrics) : undefined;
  const measured = metrics ? instrumentStorage(storage, metrics, config.storage.driver) : storage;
  const health = config.health;
  const storageCheck = health?.storageDriver;
  // Empty (always healthy) until start() adds the configured checks.
  const checks = createHealthChecks();
  const status = healthStatusHandler(checks);
  const scrape = metrics ? metricsHandler(metrics) : undefined;
  const debugHandler = debug
    ? async (request: Request): Promise<Response> => {
        const path = new URL(request.url).pathname;
        if (path === "/debug/health") return status(request);
        if (path === "/debug/vars" && (request.method === "GET" || request.method === "HEAD")) return debugVars();
        if (scrape && debug.prometheus && path === debug.prometheus.path) return scrape(request);
        return new Response("404 page not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
      }
    : undefined;
  return {
    metrics,
    storage: measured,
    gate: (handler) => (health ? healthGate(handler, checks) : handler),
    debugHandler,
    start() {
      runtime?.start();
      if (!health) return;
      // Each failure is logged, as Distribution does; the names are Distribution's.
      const add = (name: string, check: () => Promise<void>, intervalMs: number, threshold: number) =>
        checks.add({
          name, intervalMs, threshold,
          check: async () => {
            try {
              await check();
            } catch (error) {
              log({ level: "error", msg: "health check failed", check: name, error: (error as Error)?.message ?? String(error) });
              throw error;
            }
          },
        });
      if (storageCheck) add(`storagedriver_${config.storage.driver}`, storageHealthCheck(measured), storageCheck.intervalMs, storageCheck.threshold);
      for (const f of health.files) add(f.file, fileCheck(f.file), f.intervalMs, 0);
      for (const h of health.http) add(h.uri, httpCheck(h), h.intervalMs, h.threshold);
      for (const t of health.tcp) add(t.addr, tcpCheck(t), t.intervalMs, t.threshold);
    },
    stop: () => {
      runtime?.stop();
      checks.stop();
    },
  };
}
