/**
 * The process and Node runtime metrics of the all-in-one server's `/metrics`
 * (issue 43): the `process_*` family with the names, types and help texts of
 * Prometheus' Go client, which Distribution's page carries, and `nodejs_*`
 * for the heap and the event loop (prom-client's names). Read when the page
 * is rendered ({@link Metrics.beforeRender}); `/proc` is read only on Linux,
 * elsewhere those series are absent.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import { monitorEventLoopDelay, performance, type IntervalHistogram } from "node:perf_hooks";
import type { Metrics } from "../../util/metrics.js";

/** What {@link processMetrics} gives back: the event-loop sampler's switch. */
export interface ProcessMetrics {
  /** Start sampling the event loop's delay. */
  start(): void;
  /** Stop sampling (at shutdown). */
  stop(): void;
}

/** Go's `process_virtual_memory_max_bytes` for "unlimited" (an unsigned -1). */
const UNLIMITED = 18446744073709551615;

/**
 * Register the process and runtime families in `metrics` and refresh them on
 * every render. The event-loop gauges describe the time since the previous
 * render (the sampler is reset after each), as prom-client's do.
 */
export function processMetrics(metrics: Metrics): ProcessMetrics {
  const cpu = metrics.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.").labels();
  const gauge = (name: string, help: string) => metrics.gauge(name, help).labels();
  const startTime = gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.");
  const resident = gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  const proc = readable("/proc/self/status");
  const linux = proc ? {
    openFds: gauge("process_open_fds", "Number of open file descriptors."),
    maxFds: gauge("process_max_fds", "Maximum number of open file descriptors."),
    virtual: gauge("process_virtual_memory_bytes", "Virtual memory size in bytes."),
    virtualMax: gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes."),
  } : undefined;
  const heapTotal = gauge("nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes.");
  const heapUsed = gauge("nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes.");
  const external = gauge("nodejs_external_memory_bytes", "Node.js external memory size in bytes.");
  const lag = {
    mean: gauge("nodejs_eventloop_lag_mean_seconds", "The mean of the recorded event loop delays since the last scrape."),
    max: gauge("nodejs_eventloop_lag_max_seconds", "The maximum recorded event loop delay since the last scrape."),
    p50: gauge("nodejs_eventloop_lag_p50_seconds", "The 50th percentile of the recorded event loop delays since the last scrape."),
    p90: gauge("nodejs_eventloop_lag_p90_seconds", "The 90th percentile of the recorded event loop delays since the last scrape."),
    p99: gauge("nodejs_eventloop_lag_p99_seconds", "The 99th percentile of the recorded event loop delays since the last scrape."),
  };
  const [major, minor, patch] = process.versions.node.split(".");
  metrics.gauge("nodejs_version_info", "Node.js version info.", ["version", "major", "minor", "patch"])
    .labels(process.version, major ?? "", minor ?? "", patch ?? "").set(1);
  startTime.set(Math.round(performance.timeOrigin) / 1000);

  let sampler: IntervalHistogram | undefined;
  metrics.beforeRender(() => {
    const usage = process.cpuUsage();
    cpu.inc(Math.max(0, (usage.user + usage.system) / 1e6 - cpu.value));
    const memory = process.memoryUsage();
    resident.set(memory.rss);
    heapTotal.set(memory.heapTotal);
    heapUsed.set(memory.heapUsed);
    external.set(memory.external);
    if (linux) refreshLinux(linux);
    if (sampler && sampler.count > 0) {
      // Nanoseconds; the sampler's resolution is 10 ms.
      for (const [series, value] of [[lag.mean, sampler.mean], [lag.max, sampler.max], [lag.p50, sampler.percentile(50)], [lag.p90, sampler.percentile(90)], [lag.p99, sampler.percentile(99)]] as const) {
        series.set(value / 1e9);
      }
      sampler.reset();
    }
  });
  return {
    start() {
      sampler ??= monitorEventLoopDelay({ resolution: 10 });
      sampler.enable();
    },
    stop() {
      sampler?.disable();
    },
  };
}

type LinuxGauges = { openFds: { set(v: number): void }; maxFds: { set(v: number): void }; virtual: { set(v: number): void }; virtualMax: { set(v: number): void } };

/** `/proc/self`: open descriptors, their limit, the virtual memory size and its limit. A read that fails keeps the last value. */
function refreshLinux(g: LinuxGauges): void {
  try {
    g.openFds.set(readdirSync("/proc/self/fd").length);
  } catch {
    // keep the last value
  }
  const status = readable("/proc/self/status");
  const vmSize = status && /^VmSize:\s+(\d+) kB$/m.exec(status);
  if (vmSize) g.virtual.set(Number(vmSize[1]) * 1024);
  const limits = readable("/proc/self/limits");
  if (limits) {
    const fds = /^Max open files\s+(\S+)/m.exec(limits);
    if (fds) g.maxFds.set(fds[1] === "unlimited" ? UNLIMITED : Number(fds[1]));
    const address = /^Max address space\s+(\S+)/m.exec(limits);
    if (address) g.virtualMax.set(address[1] === "unlimited" ? UNLIMITED : Number(address[1]));
  }
}

function readable(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
