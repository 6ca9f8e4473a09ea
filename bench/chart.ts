/**
 * A bar chart of registry-kit vs Distribution per metric, as hand-written SVG
 * (no dependency), from a results JSON written by bench/run.ts.
 *
 *   node --import tsx bench/chart.ts [bench/results/full.json] [docs/performance.svg]
 *
 * Each metric gets its own row with bars scaled to that metric's larger value
 * (units differ between rows), the numbers beside the bars and the ratio on
 * the right. Memory rows are "smaller is better".
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Metric } from "./run/context.js";

/** What the chart reads of a result line (type-only: importing bench/run/context.ts's values would start a bench). */
type ChartMetric = Pick<Metric, "id" | "label" | "unit" | "higherIsBetter" | "rk" | "dist" | "ratio" | "target" | "met"> & { group?: string };
interface ChartInput {
  date: string;
  mode: string;
  machine: { nproc: number; memoryGiB: number; node: string; loadAtStart: number[] };
  metrics: ChartMetric[];
  ceilings: Record<string, { value: number; unit: string; label: string }>;
}

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fmt = (x: number): string => (x >= 100 ? Math.round(x).toLocaleString("en-US") : String(x >= 10 ? Math.round(x * 10) / 10 : Math.round(x * 100) / 100));

export function renderChart(input: ChartInput): string {
  const rows = input.metrics.filter((m) => m.dist !== undefined && !(m.group === "memory" && m.target === undefined)) as Array<ChartMetric & { dist: number }>;
  const W = 980;
  const labelW = 330;
  const barMax = 440;
  const rowH = 46;
  const top = 70;
  // the ceilings as footer lines of at most ~150 characters
  const footLines: string[] = [];
  for (const x of Object.values(input.ceilings)) {
    const item = `${x.label}: ${fmt(x.value)} ${x.unit}`;
    const last = footLines.length - 1;
    if (last >= 0 && footLines[last]!.length + item.length < 150) footLines[last] += ` · ${item}`;
    else footLines.push(last < 0 ? `ceilings: ${item}` : item);
  }
  const H = top + rows.length * rowH + 26 + footLines.length * 15;
  const RK = "#2f6fdf";
  const DIST = "#9aa3ad";
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  const m = input.machine;
  out.push(`<text x="16" y="24" font-size="16" font-weight="bold">registry-kit vs CNCF Distribution 2.8 (same machine, same run)</text>`);
  out.push(`<text x="16" y="44" fill="#555">${esc(`${input.date.slice(0, 10)} · ${input.mode} run · ${m.nproc} cpu · ${m.memoryGiB} GiB · node ${m.node} · load at start ${m.loadAtStart.map((x) => x.toFixed(2)).join(" ")}`)}</text>`);
  out.push(`<rect x="${W - 250}" y="52" width="12" height="12" fill="${RK}"/><text x="${W - 233}" y="62">registry-kit</text>`);
  out.push(`<rect x="${W - 150}" y="52" width="12" height="12" fill="${DIST}"/><text x="${W - 133}" y="62">Distribution</text>`);
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const scale = Math.max(r.rk, r.dist) || 1;
    const wRk = Math.max(1, (r.rk / scale) * barMax);
    const wD = Math.max(1, (r.dist / scale) * barMax);
    if (i % 2 === 0) out.push(`<rect x="0" y="${y - 4}" width="${W}" height="${rowH}" fill="#f6f8fa"/>`);
    const better = r.higherIsBetter ? "higher is better" : "lower is better";
    out.push(`<text x="16" y="${y + 13}">${esc(r.label.length > 52 ? r.label.slice(0, 51) + "…" : r.label)}</text>`);
    out.push(`<text x="16" y="${y + 29}" fill="#777" font-size="11">${esc(`${r.unit}, ${better}`)}</text>`);
    out.push(`<rect x="${labelW}" y="${y}" width="${wRk.toFixed(1)}" height="16" fill="${RK}"/>`);
    out.push(`<text x="${labelW + wRk + 6}" y="${y + 12}">${esc(fmt(r.rk))}</text>`);
    out.push(`<rect x="${labelW}" y="${y + 19}" width="${wD.toFixed(1)}" height="16" fill="${DIST}"/>`);
    out.push(`<text x="${labelW + wD + 6}" y="${y + 31}">${esc(fmt(r.dist))}</text>`);
    const ratio = r.ratio === undefined ? "" : `${r.ratio}×`;
    const color = r.met === undefined ? "#333" : r.met ? "#1a7f37" : "#cf222e";
    out.push(`<text x="${W - 16}" y="${y + 16}" text-anchor="end" font-weight="bold" fill="${color}">${esc(ratio)}</text>`);
    if (r.target) out.push(`<text x="${W - 16}" y="${y + 31}" text-anchor="end" fill="${color}" font-size="11">${esc(`target ${r.target}${r.met ? " ✓" : " ✗"}`)}</text>`);
  });
  footLines.forEach((line, i) => out.push(`<text x="16" y="${H - 14 - (footLines.length - 1 - i) * 15}" fill="#555" font-size="11">${esc(line)}</text>`));
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}

export function writeChart(input: unknown, file: string): void {
  writeFileSync(file, renderChart(input as ChartInput));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = dirname(fileURLToPath(import.meta.url));
  const input = process.argv[2] ?? join(here, "results", "full.json");
  const output = process.argv[3] ?? join(here, "..", "docs", "performance.svg");
  writeChart(JSON.parse(readFileSync(input, "utf8")), output);
  console.log(`chart: ${output}`);
}
