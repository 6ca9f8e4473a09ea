/**
 * A small, runtime-neutral metrics collector (counters, gauges, histograms
 * with labels) and its rendering in the Prometheus text exposition format
 * 0.0.4. The services report into one {@link Metrics}; a debug listener
 * serves {@link Metrics.render}.
 *
 * Why not prom-client: it imports `node:` modules (cluster, perf_hooks, v8),
 * so it cannot run in the core's other runtimes (Bun is fine, Workers and
 * Deno Deploy are not), and the core must stay runtime-neutral.
 *
 * Hot paths look a series up once per request with positional label values
 * ({@link Family.labels}): nested `Map`s, so a known series costs no
 * allocation.
 *
 * @module
 */

/** The content type of {@link Metrics.render}'s output. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One counter series: only goes up. */
export interface CounterSeries {
  /** Add `by` (default 1; must not be negative). */
  inc(by?: number): void;
  /** The current value. */
  readonly value: number;
}

/** One gauge series: goes up and down. */
export interface GaugeSeries {
  /** Add `by` (default 1). */
  inc(by?: number): void;
  /** Subtract `by` (default 1). */
  dec(by?: number): void;
  /** Set the value. */
  set(value: number): void;
  /** The current value. */
  readonly value: number;
}

/** One histogram series. */
export interface HistogramSeries {
  /** Count one observation. */
  observe(value: number): void;
  /** Observations so far. */
  readonly count: number;
  /** Sum of the observations. */
  readonly sum: number;
  /** Observations at or below each upper bound, cumulative, in bucket order (`+Inf` last). */
  cumulative(): number[];
}

/** A metric family: one name, one help text, one series per combination of label values. */
export interface Family<S> {
  /** The metric's name. */
  readonly name: string;
  /** The series for these label values, in the order of the family's label names (created on first use). */
  labels(...values: string[]): S;
}

/** Buckets (seconds) of Distribution's HTTP request durations. */
export const HTTP_DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60];
/** Prometheus' default buckets (seconds); Distribution's storage action timer uses them. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Buckets (bytes) of Distribution's request and response sizes: 1 KiB doubling to 2 GiB (22 buckets). */
export const SIZE_BUCKETS: readonly number[] = Array.from({ length: 22 }, (_, i) => 1024 * 2 ** i);

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

type Kind = "counter" | "gauge" | "histogram";

interface FamilyState {
  name: string;
  help: string;
  kind: Kind;
  labelNames: readonly string[];
  buckets: readonly number[];
  /** Nested maps, one level per label; the leaves are series. */
  root: Map<string, unknown>;
  /** Every series with its label values, in creation order (for rendering). */
  all: { values: readonly string[]; series: SeriesImpl }[];
  /** The series of a family without labels. */
  single?: SeriesImpl;
}

class SeriesImpl implements CounterSeries, GaugeSeries, HistogramSeries {
  value = 0;
  count = 0;
  sum = 0;
  private readonly bucketCounts: Float64Array;

  constructor(
    private readonly kind: Kind,
    private readonly bounds: readonly number[],
  ) {
    this.bucketCounts = new Float64Array(kind === "histogram" ? bounds.length : 0);
  }

  inc(by = 1): void {
    if (this.kind === "counter" && !(by >= 0)) throw new RangeError("a counter only goes up");
    this.value += by;
  }

  dec(by = 1): void {
    this.value -= by;
  }

  set(value: number): void {
    this.value = value;
  }

  observe(value: number): void {
    this.count++;
    this.sum += value;
    const bounds = this.bounds;
    // Non-cumulative counts here; render() adds them up.
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.bucketCounts[i]!++;
        return;
      }
    }
  }

  cumulative(): number[] {
    const out: number[] = [];
    let running = 0;
    for (const n of this.bucketCounts) out.push((running += n));
    out.push(this.count);
    return out;
  }
}

/** A set of metric families, rendered together. */
export interface Metrics {
  /** A counter family (`name` should end in `_total`). */
  counter(name: string, help: string, labelNames?: readonly string[]): Family<CounterSeries>;
  /** A gauge family. */
  gauge(name: string, help: string, labelNames?: readonly string[]): Family<GaugeSeries>;
  /** A histogram family with these upper bounds (ascending; `+Inf` is implied). */
  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Family<HistogramSeries>;
  /**
   * Run `hook` at the start of every {@link Metrics.render}, to refresh values
   * that are read rather than counted (the process' CPU time and memory).
   */
  beforeRender(hook: () => void): void;
  /** Every family in the Prometheus text exposition format 0.0.4 ({@link PROMETHEUS_CONTENT_TYPE}). */
  render(): string;
}

/**
 * Create an empty {@link Metrics}. Asking twice for the same name returns the
 * same family when kind, labels and buckets agree, and throws otherwise, so
 * two parts of a server may share one family.
 */
export function createMetrics(): Metrics {
  const families = new Map<string, FamilyState>();

  function family<S>(kind: Kind, name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Family<S> {
    if (!NAME.test(name)) throw new TypeError(`invalid metric name ${JSON.stringify(name)}`);
    for (const label of labelNames) {
      if (!LABEL.test(label) || label.startsWith("__") || (kind === "histogram" && label === "le")) {
        throw new TypeError(`invalid label name ${JSON.stringify(label)} of ${name}`);
      }
    }
    if (kind === "histogram" && !buckets.every((b, i) => Number.isFinite(b) && (i === 0 || b > buckets[i - 1]!))) {
      throw new TypeError(`buckets of ${name} must be finite and ascending`);
    }
    let state = families.get(name);
    if (state) {
      const same = state.kind === kind && sameList(state.labelNames, labelNames) && sameList(state.buckets, buckets);
      if (!same) throw new TypeError(`metric ${name} is already registered with another kind, labels or buckets`);
    } else {
      state = { name, help, kind, labelNames: [...labelNames], buckets: [...buckets], root: new Map(), all: [] };
      families.set(name, state);
    }
    const s = state;
    return {
      name,
      labels: (...values: string[]): S => seriesOf(s, values) as S,
    };
  }

  const hooks: (() => void)[] = [];
  return {
    counter: (name, help, labelNames = []) => family("counter", name, help, labelNames, []),
    gauge: (name, help, labelNames = []) => family("gauge", name, help, labelNames, []),
    histogram: (name, help, labelNames, buckets) => family("histogram", name, help, labelNames, buckets),
    beforeRender: (hook) => void hooks.push(hook),
    render: () => {
      for (const hook of hooks) hook();
      return renderFamilies([...families.values()]);
    },
  };
}

function seriesOf(state: FamilyState, values: readonly string[]): SeriesImpl {
  const n = state.labelNames.length;
  if (values.length !== n) throw new TypeError(`${state.name} takes ${n} label value(s), got ${values.length}`);
  if (n === 0) return (state.single ??= added(state, []));
  let level = state.root;
  for (let i = 0; i < n - 1; i++) {
    let next = level.get(values[i]!) as Map<string, unknown> | undefined;
    if (!next) level.set(values[i]!, (next = new Map()));
    level = next;
  }
  let series = level.get(values[n - 1]!) as SeriesImpl | undefined;
  if (!series) level.set(values[n - 1]!, (series = added(state, [...values])));
  return series;
}

function added(state: FamilyState, values: readonly string[]): SeriesImpl {
  const series = new SeriesImpl(state.kind, state.buckets);
  state.all.push({ values, series });
  return series;
}

function sameList(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function renderFamilies(families: readonly FamilyState[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.kind}`);
    for (const { values, series } of f.all) {
      const labels = f.labelNames.map((name, i) => `${name}="${escapeLabel(values[i]!)}"`);
      if (f.kind !== "histogram") {
        lines.push(`${f.name}${braces(labels)} ${formatNumber(series.value)}`);
        continue;
      }
      const cumulative = series.cumulative();
      f.buckets.forEach((bound, i) => lines.push(`${f.name}_bucket${braces([...labels, `le="${formatNumber(bound)}"`])} ${cumulative[i]}`));
      lines.push(`${f.name}_bucket${braces([...labels, 'le="+Inf"'])} ${series.count}`);
      lines.push(`${f.name}_sum${braces(labels)} ${formatNumber(series.sum)}`, `${f.name}_count${braces(labels)} ${series.count}`);
    }
  }
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}

const braces = (labels: readonly string[]): string => (labels.length > 0 ? `{${labels.join(",")}}` : "");

/** The format's number syntax: Go-style `+Inf`, `-Inf`, `NaN`. */
function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

/** HELP text escapes backslash and newline. */
const escapeHelp = (s: string): string => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
/** Label values escape backslash, double quote and newline. */
const escapeLabel = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
