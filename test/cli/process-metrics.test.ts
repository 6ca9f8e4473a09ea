/**
 * The process and runtime metrics of `/metrics` (issue 43), read in this
 * process: the names, types and help texts of Prometheus' Go client for
 * `process_*` (what Distribution's page has), `nodejs_*` for the heap and the
 * event loop, fresh at every render. serve-debug.test.ts checks the page of a
 * real server with promtool.
 */
import { describe, expect, it } from "vitest";
import { processMetrics } from "../../src/server/all-in-one/process-metrics.js";
import { createMetrics } from "../../src/util/metrics.js";
import { parseExposition, valueOf } from "../util/prometheus-parse.js";

describe("processMetrics", () => {
  it("reports this process: CPU, memory, start time, descriptors, heap, Node's version", () => {
    const metrics = createMetrics();
    processMetrics(metrics);
    const text = metrics.render();
    const families = parseExposition(text);
    const types = Object.fromEntries([...families].filter(([name]) => name.startsWith("process_")).map(([name, f]) => [name, f.type]));
    expect(types).toEqual({
      process_cpu_seconds_total: "COUNTER",
      process_start_time_seconds: "GAUGE",
      process_resident_memory_bytes: "GAUGE",
      process_open_fds: "GAUGE",
      process_max_fds: "GAUGE",
      process_virtual_memory_bytes: "GAUGE",
      process_virtual_memory_max_bytes: "GAUGE",
    });
    const cpu = process.cpuUsage();
    expect(valueOf(text, "process_cpu_seconds_total")).toBeCloseTo((cpu.user + cpu.system) / 1e6, 0);
    expect(valueOf(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(valueOf(text, "process_start_time_seconds")).toBeCloseTo(performance.timeOrigin / 1000, 0);
    expect(valueOf(text, "process_open_fds")).toBeGreaterThan(2);
    expect(valueOf(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(valueOf(text, "nodejs_version_info", { version: process.version })).toBe(1);
  });

  it("counts CPU time up between renders, never down", () => {
    const metrics = createMetrics();
    processMetrics(metrics);
    const first = valueOf(metrics.render(), "process_cpu_seconds_total");
    const until = Date.now() + 30;
    while (Date.now() < until) Math.sqrt(Math.random()); // burn a little CPU
    expect(valueOf(metrics.render(), "process_cpu_seconds_total")).toBeGreaterThan(first);
  });

  it("reports the event loop's delay since the last render once started, and stops", async () => {
    const metrics = createMetrics();
    const runtime = processMetrics(metrics);
    runtime.start();
    try {
      const until = Date.now() + 120;
      while (Date.now() < until) {
        const block = Date.now() + 25;
        while (Date.now() < block) Math.sqrt(Math.random()); // a blocked loop
        await new Promise((r) => setTimeout(r, 1));
      }
      expect(valueOf(metrics.render(), "nodejs_eventloop_lag_max_seconds")).toBeGreaterThan(0.01);
    } finally {
      runtime.stop();
    }
  });
});
