/**
 * The Prometheus text format parsed by a real parser
 * (parse-prometheus-text-format), typed for the tests.
 */
import parsePrometheus from "parse-prometheus-text-format";

/** One sample as the parser returns it. */
export interface ParsedSample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

/** One family as the parser returns it. */
export interface ParsedFamily {
  name: string;
  help: string;
  type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  metrics: ParsedSample[];
}

/** Parse exposition text into families by name. */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const families = (parsePrometheus as (t: string) => ParsedFamily[])(text);
  return new Map(families.map((f) => [f.name, f]));
}

/**
 * Every sample line as `{name, labels, value}` (histogram series included:
 * `<name>_bucket` with its `le`, `_sum`, `_count`). The parser folds the
 * series of a labelled histogram into one, so the samples are read with the
 * TYPE lines left out, after {@link parseExposition} has checked the text.
 */
export function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  parseExposition(text);
  const untyped = text.split("\n").filter((line) => !line.startsWith("# TYPE ")).join("\n");
  // A name may come back as several families (one per run of lines): keep them all.
  return (parsePrometheus as (t: string) => ParsedFamily[])(untyped).flatMap((f) =>
    f.metrics.map((m) => ({ name: f.name, labels: m.labels ?? {}, value: Number(m.value) })),
  );
}

/** The value of the one sample named `name` whose labels include `labels`; throws when none or several match. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  const found = samples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]!.value;
}

/** The sample of `family` whose labels include `labels`. */
export function sampleOf(family: ParsedFamily | undefined, labels: Record<string, string>): ParsedSample | undefined {
  return family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}
