import { describe, expect, it } from "vitest";
import { createMetrics, HTTP_DURATION_BUCKETS, PROMETHEUS_CONTENT_TYPE, SIZE_BUCKETS } from "../../src/util/metrics.js";
import { parseExposition, sampleOf, valueOf } from "./prometheus-parse.js";

describe("createMetrics", () => {
  it("counts per label combination and renders parseable counters and gauges", () => {
    const metrics = createMetrics();
    const requests = metrics.counter("demo_requests_total", "Requests.", ["route", "code"]);
    requests.labels("manifest", "200").inc();
    requests.labels("manifest", "200").inc(2);
    requests.labels("blob", "404").inc();
    const inFlight = metrics.gauge("demo_in_flight", "In flight.");
    inFlight.labels().inc(3);
    inFlight.labels().dec();

    const parsed = parseExposition(metrics.render());
    const family = parsed.get("demo_requests_total");
    expect(family?.type).toBe("COUNTER");
    expect(family?.help).toBe("Requests.");
    expect(sampleOf(family, { route: "manifest", code: "200" })?.value).toBe("3");
    expect(sampleOf(family, { route: "blob", code: "404" })?.value).toBe("1");
    expect(family?.metrics).toHaveLength(2);
    expect(parsed.get("demo_in_flight")?.type).toBe("GAUGE");
    expect(parsed.get("demo_in_flight")?.metrics[0]?.value).toBe("2");
  });

  it("returns the same series object for the same label values", () => {
    const family = createMetrics().counter("same_total", "x", ["a", "b"]);
    expect(family.labels("1", "2")).toBe(family.labels("1", "2"));
    expect(family.labels("1", "2")).not.toBe(family.labels("1", "3"));
  });

  it("puts each observation in the first bucket it fits and renders cumulative buckets, sum and count", () => {
    const metrics = createMetrics();
    const h = metrics.histogram("demo_seconds", "Latency.", ["op"], [0.1, 0.5, 1]);
    const s = h.labels("read");
    for (const v of [0.05, 0.1, 0.3, 0.7, 2]) s.observe(v);
    expect(s.cumulative()).toEqual([2, 3, 4, 5]);
    h.labels("write").observe(0.2);
    const text = metrics.render();
    expect(parseExposition(text).get("demo_seconds")?.type).toBe("HISTOGRAM");
    const bucket = (le: string) => valueOf(text, "demo_seconds_bucket", { op: "read", le });
    expect([bucket("0.1"), bucket("0.5"), bucket("1"), bucket("+Inf")]).toEqual([2, 3, 4, 5]);
    expect(valueOf(text, "demo_seconds_count", { op: "read" })).toBe(5);
    expect(valueOf(text, "demo_seconds_sum", { op: "read" })).toBeCloseTo(3.15, 10);
    expect(valueOf(text, "demo_seconds_bucket", { op: "write", le: "0.1" })).toBe(0);
    expect(valueOf(text, "demo_seconds_bucket", { op: "write", le: "0.5" })).toBe(1);
  });

  it("escapes label values and help text as the format requires", () => {
    const metrics = createMetrics();
    metrics.counter("esc_total", 'help with \\ and\nnewline', ["v"]).labels('a"b\\c\nd').inc();
    const text = metrics.render();
    expect(text).toContain('# HELP esc_total help with \\\\ and\\nnewline\n');
    expect(text).toContain('esc_total{v="a\\"b\\\\c\\nd"} 1\n');
    expect(sampleOf(parseExposition(text).get("esc_total"), {})?.value).toBe("1");
  });

  it("renders nothing for no families, and text ending in a newline otherwise", () => {
    const metrics = createMetrics();
    expect(metrics.render()).toBe("");
    metrics.gauge("g", "g").labels().set(1.5);
    expect(metrics.render()).toBe("# HELP g g\n# TYPE g gauge\ng 1.5\n");
    expect(PROMETHEUS_CONTENT_TYPE).toBe("text/plain; version=0.0.4; charset=utf-8");
  });

  it("shares a family asked for twice alike, and refuses a clash, bad names and misuse", () => {
    const metrics = createMetrics();
    const a = metrics.counter("shared_total", "x", ["l"]);
    const b = metrics.counter("shared_total", "x", ["l"]);
    a.labels("v").inc();
    expect(b.labels("v").value).toBe(1);
    expect(() => metrics.gauge("shared_total", "x", ["l"])).toThrow(/already registered/);
    expect(() => metrics.counter("shared_total", "x", ["other"])).toThrow(/already registered/);
    expect(() => metrics.counter("bad-name", "x")).toThrow(/invalid metric name/);
    expect(() => metrics.counter("ok_total", "x", ["__reserved"])).toThrow(/invalid label name/);
    expect(() => metrics.histogram("h", "x", ["le"], [1])).toThrow(/invalid label name/);
    expect(() => metrics.histogram("h2", "x", [], [1, 1])).toThrow(/ascending/);
    expect(() => a.labels()).toThrow(/takes 1 label/);
    expect(() => a.labels("v").inc(-1)).toThrow(/only goes up/);
  });

  it("has Distribution's buckets", () => {
    expect(HTTP_DURATION_BUCKETS).toEqual([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60]);
    expect(SIZE_BUCKETS).toHaveLength(22);
    expect(SIZE_BUCKETS[0]).toBe(1024);
    expect(SIZE_BUCKETS[21]).toBe(1024 * 2 ** 21);
  });
});

describe("beforeRender (issue 43)", () => {
  it("runs its hooks before every render, so read values are fresh", () => {
    const metrics = createMetrics();
    const gauge = metrics.gauge("read_value", "A value read at render time.").labels();
    let reads = 0;
    metrics.beforeRender(() => gauge.set(++reads));
    expect(metrics.render()).toContain("read_value 1\n");
    expect(metrics.render()).toContain("read_value 2\n");
  });
});
