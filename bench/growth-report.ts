/**
 * The report of bench/growth.ts: the tables between the growth markers of
 * docs/performance.md and docs/performance-growth.svg, a hand-written SVG (no
 * dependency, the style of bench/chart.ts) with one panel per case: the median
 * time of one page (tags/list, _catalog) or of GC per 1,000 blobs against N,
 * each point with the range over the runs. A flat line is the goal: the cost
 * of a page does not grow with the total, and the total grows linearly.
 *
 *   node --import tsx bench/growth-report.ts [bench/results/growth.json]   # re-render from saved results
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One measurement of one case (bench/results/growth.json). */
export interface GrowthResult {
  driver: string;
  kind: "tags" | "catalog" | "gc" | "gc-stat" | "referrers";
  n: number;
  /** 1-based run number on the same seeded store. */
  run: number;
  /** Time to seed the store (0 when a kept seed was reused). */
  seedMs: number;
  totalMs: number;
  pages: number;
  firstPageMs: number;
  lastPageMs: number;
  medianPageMs: number;
  maxPageMs: number;
  rssGrowthMiB: number;
  heapGrowthMiB: number;
  /** V8 heap still in use after a full GC at the end, over the value before. */
  heapRetainedMiB: number;
  /** 1-minute load average at the end of the measurement. */
  load1: number;
}

const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (x: number): string => (x >= 100 ? Math.round(x).toLocaleString("en-US") : String(round(x, x >= 10 ? 1 : 2)));
const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const DRIVER_ORDER = ["fs", "s3", "memory"];

/** The results grouped by driver, kind and N; by driver (fs, s3, others), then N. */
function groups(results: GrowthResult[]): GrowthResult[][] {
  const map = new Map<string, GrowthResult[]>();
  for (const r of results) map.set(`${r.driver} ${r.kind} ${r.n}`, [...(map.get(`${r.driver} ${r.kind} ${r.n}`) ?? []), r]);
  const rank = (d: string) => (DRIVER_ORDER.includes(d) ? DRIVER_ORDER.indexOf(d) : DRIVER_ORDER.length);
  return [...map.values()].sort((a, b) => rank(a[0]!.driver) - rank(b[0]!.driver) || a[0]!.n - b[0]!.n);
}

/** The median of `values` with their range in brackets when the runs differ. */
function spread(values: number[]): string {
  const [lo, hi, mid] = [Math.min(...values), Math.max(...values), median(values)];
  return values.length === 1 || fmt(lo) === fmt(hi) ? fmt(mid) : `${fmt(mid)} (${fmt(lo)}–${fmt(hi)})`;
}

const TITLES: Record<GrowthResult["kind"], string> = {
  tags: "tags/list paged through N tags",
  catalog: "_catalog paged through N repositories",
  gc: "GC (dry run) over N blobs",
  "gc-stat": "GC (dry run) over N blobs with a HEAD per blob (a listing without sizes and times: how GC ran on S3 before)",
  referrers: "referrers of one manifest",
};

/** The Markdown between the growth markers. */
export function growthSection(results: GrowthResult[], page: number): string {
  const loads = results.map((r) => r.load1);
  const lines = [
    "<!-- growth:begin -->", "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`bench/growth.ts\`, in process, ${page} entries a page. Each cell is the median over the runs with the range in brackets; the 1-minute load average at the end of each measurement was ${fmt(Math.min(...loads))}–${fmt(Math.max(...loads))} (2 cores shared with other work). Seed time is how long filling the store took (untimed in the figures).`,
    "",
  ];
  for (const kind of ["tags", "catalog", "gc", "gc-stat", "referrers"] as const) {
    const rows = groups(results.filter((r) => r.kind === kind));
    if (!rows.length) continue;
    const paged = kind !== "gc" && kind !== "gc-stat";
    lines.push(`**${TITLES[kind]}**`, "");
    if (paged) {
      lines.push("| driver | N | runs | seed s | total ms | pages | median page ms | slowest page ms | RSS peak growth MiB | heap retained MiB |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    } else {
      lines.push("| driver | N | runs | seed s | total ms | ms per 1,000 blobs | RSS peak growth MiB | heap retained MiB |", "|---|---:|---:|---:|---:|---:|---:|---:|");
    }
    for (const g of rows) {
      const r = g[0]!;
      const seed = Math.max(...g.map((x) => x.seedMs));
      const head = `| ${r.driver} | ${r.n.toLocaleString("en-US")} | ${g.length} | ${seed ? fmt(seed / 1000) : "—"} | ${spread(g.map((x) => x.totalMs))}`;
      const tail = `${spread(g.map((x) => x.rssGrowthMiB))} | ${spread(g.map((x) => x.heapRetainedMiB))} |`;
      lines.push(paged
        ? `${head} | ${r.pages} | ${spread(g.map((x) => x.medianPageMs))} | ${spread(g.map((x) => x.maxPageMs))} | ${tail}`
        : `${head} | ${spread(g.map((x) => (x.totalMs / x.n) * 1000))} | ${tail}`);
    }
    lines.push("");
  }
  lines.push("![median time of one page, and GC time per 1,000 blobs, against N; fs and S3](performance-growth.svg)", "", "<!-- growth:end -->");
  return lines.join("\n");
}

interface Series {
  label: string;
  color: string;
  dashed?: boolean;
  points: Array<{ n: number; mid: number; lo: number; hi: number }>;
}

const COLORS: Record<string, string> = { fs: "#2f6fdf", s3: "#d9730d", "s3 HEAD": "#9aa3ad", memory: "#1a7f37" };

function seriesOf(results: GrowthResult[], kinds: Array<GrowthResult["kind"]>, value: (r: GrowthResult) => number): Series[] {
  const out: Series[] = [];
  for (const kind of kinds) {
    for (const driver of [...new Set(results.map((r) => r.driver))]) {
      const rows = groups(results.filter((r) => r.kind === kind && r.driver === driver)).sort((a, b) => a[0]!.n - b[0]!.n);
      if (!rows.length) continue;
      const label = kind === "gc-stat" ? `${driver} HEAD` : driver;
      out.push({
        label: kind === "gc-stat" ? `${driver}, a HEAD per blob (before)` : driver,
        color: COLORS[label] ?? "#333",
        dashed: kind === "gc-stat",
        points: rows.map((g) => {
          const xs = g.map(value);
          return { n: g[0]!.n, mid: median(xs), lo: Math.min(...xs), hi: Math.max(...xs) };
        }),
      });
    }
  }
  return out;
}

/** docs/performance-growth.svg. */
export function renderGrowthChart(results: GrowthResult[], date: string): string {
  const panels = [
    { title: "tags/list: one page of 1,000", unit: "ms per page (median)", series: seriesOf(results, ["tags"], (r) => r.medianPageMs) },
    { title: "_catalog: one page of 1,000", unit: "ms per page (median)", series: seriesOf(results, ["catalog"], (r) => r.medianPageMs) },
    { title: "GC (dry run)", unit: "ms per 1,000 blobs", series: seriesOf(results, ["gc", "gc-stat"], (r) => (r.totalMs / r.n) * 1000) },
  ].filter((p) => p.series.length > 0);
  const W = 980;
  const H = 410;
  const pw = (W - 40) / Math.max(1, panels.length);
  const top = 106;
  const ph = 210;
  const sizes = [...new Set(results.filter((r) => r.kind !== "referrers").map((r) => r.n))].sort((a, b) => a - b);
  const loads = results.map((r) => r.load1);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="16" y="24" font-size="16" font-weight="bold">Cost growth: one page, and GC per 1,000 blobs, against the total N (flat is the goal)</text>`);
  out.push(`<text x="16" y="44" fill="#555">${esc(`${date} · bench/growth.ts, in process · median over runs, bar = min–max · load ${fmt(Math.min(...loads))}–${fmt(Math.max(...loads))} on 2 shared cores · x: N on a log scale`)}</text>`);
  const legend = [...new Map(panels.flatMap((p) => p.series).map((s) => [s.label, s])).values()];
  legend.forEach((s, i) => {
    const x = 16 + i * 230;
    out.push(`<line x1="${x}" y1="62" x2="${x + 24}" y2="62" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="5 4"' : ""}/><text x="${x + 30}" y="66">${esc(s.label)}</text>`);
  });
  panels.forEach((panel, pi) => {
    const x0 = 20 + pi * pw + 46;
    const x1 = 20 + (pi + 1) * pw - 24;
    const yMax = Math.max(...panel.series.flatMap((s) => s.points.map((p) => p.hi))) * 1.15 || 1;
    const xOf = (n: number) => (sizes.length <= 1 ? (x0 + x1) / 2 : x0 + ((Math.log10(n) - Math.log10(sizes[0]!)) / (Math.log10(sizes.at(-1)!) - Math.log10(sizes[0]!))) * (x1 - x0));
    const yOf = (v: number) => top + ph - (v / yMax) * ph;
    out.push(`<text x="${x0}" y="${top - 8}" font-weight="bold">${esc(panel.title)}</text>`);
    out.push(`<line x1="${x0}" y1="${top + ph}" x2="${x1}" y2="${top + ph}" stroke="#999"/><line x1="${x0}" y1="${top}" x2="${x0}" y2="${top + ph}" stroke="#999"/>`);
    for (const t of [0, 0.5, 1]) {
      const v = yMax * t / 1.15;
      out.push(`<line x1="${x0 - 4}" y1="${yOf(v).toFixed(1)}" x2="${x1}" y2="${yOf(v).toFixed(1)}" stroke="#eee"/><text x="${x0 - 6}" y="${(yOf(v) + 4).toFixed(1)}" text-anchor="end" fill="#555" font-size="11">${esc(fmt(v))}</text>`);
    }
    for (const n of sizes) out.push(`<text x="${xOf(n).toFixed(1)}" y="${top + ph + 16}" text-anchor="middle" fill="#555" font-size="11">${esc(n >= 1000 ? `${n / 1000}k` : String(n))}</text>`);
    out.push(`<text x="${(x0 + x1) / 2}" y="${top + ph + 34}" text-anchor="middle" fill="#777" font-size="11">${esc(`N · y: ${panel.unit}`)}</text>`);
    for (const s of panel.series) {
      const path = s.points.map((p, i) => `${i ? "L" : "M"}${xOf(p.n).toFixed(1)},${yOf(p.mid).toFixed(1)}`).join(" ");
      out.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="5 4"' : ""}/>`);
      for (const p of s.points) {
        const x = xOf(p.n);
        out.push(`<line x1="${x.toFixed(1)}" y1="${yOf(p.lo).toFixed(1)}" x2="${x.toFixed(1)}" y2="${yOf(p.hi).toFixed(1)}" stroke="${s.color}" stroke-width="1.5"/>`);
        out.push(`<circle cx="${x.toFixed(1)}" cy="${yOf(p.mid).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
        out.push(`<text x="${(x + 6).toFixed(1)}" y="${(yOf(p.mid) - 6).toFixed(1)}" fill="${s.color}" font-size="11">${esc(fmt(p.mid))}</text>`);
      }
    }
  });
  out.push(`<text x="16" y="${H - 30}" fill="#555" font-size="11">${esc("fs: a directory per prefix, the sorted listing of a large directory kept while unchanged (the first page after a change reads it all)")}</text>`);
  out.push(`<text x="16" y="${H - 14}" fill="#555" font-size="11">${esc("s3: radosgw (Ceph 16.2, memstore OSD) on loopback, a page is one ListObjectsV2 from start-after · memory: sorts every key at each page")}</text>`);
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** Replace the growth section of `docs/performance.md` and write `docs/performance-growth.svg`. */
export function writeGrowthDocs(docsDir: string, results: GrowthResult[], page: number): void {
  const doc = join(docsDir, "performance.md");
  const section = growthSection(results, page);
  const begin = "<!-- growth:begin -->";
  const end = "<!-- growth:end -->";
  const text = readFileSync(doc, "utf8");
  const at = text.indexOf(begin);
  writeFileSync(doc, at >= 0 ? text.slice(0, at) + section + text.slice(text.indexOf(end) + end.length) : `${text.trimEnd()}\n\n## Cost growth (issue 22)\n\n${section}\n`);
  writeFileSync(join(docsDir, "performance-growth.svg"), renderGrowthChart(results, new Date().toISOString().slice(0, 10)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = dirname(fileURLToPath(import.meta.url));
  const input = process.argv[2] ?? join(here, "results", "growth.json");
  writeGrowthDocs(join(here, "..", "docs"), (JSON.parse(readFileSync(input, "utf8")) as { results: GrowthResult[] }).results, 1000);
  console.log("wrote docs/performance.md (growth section) and docs/performance-growth.svg");
}
