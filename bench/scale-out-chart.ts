/**
 * docs/performance-scale-out.svg: aggregate push and pull MiB/s against the
 * number of `registry-kit serve` processes on one bucket, from the results of
 * bench/scale-out.ts; a hand-written SVG (the style of bench/chart.ts), bars at
 * the median round with a whisker over the range of the rounds.
 */

interface PhaseLike {
  mibPerSecond: number;
}

interface ResultLike {
  backends: number;
  push: PhaseLike[];
  pull: PhaseLike[];
  load?: [number, number];
}

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The chart as SVG text. */
export function renderScaleOutChart(results: ResultLike[], run: { images: number; size: number; rounds: number; env: string; date?: string }): string {
  const W = 980;
  const H = 360;
  const left = 70;
  const top = 80;
  const ph = 200;
  const groupW = (W - left - 40) / Math.max(1, results.length);
  const colors = { push: "#2f6fdf", pull: "#d9730d" } as const;
  const stats = results.map((r) => ({
    n: r.backends,
    push: r.push.map((p) => p.mibPerSecond),
    pull: r.pull.map((p) => p.mibPerSecond),
  }));
  const yMax = Math.max(1, ...stats.flatMap((s) => [...s.push, ...s.pull])) * 1.15;
  const yOf = (v: number) => top + ph - (v / yMax) * ph;
  const loads = results.flatMap((r) => r.load ?? []);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="16" y="24" font-size="16" font-weight="bold">Scale-out: N registry-kit processes on one radosgw bucket, behind nginx (2-core machine)</text>`);
  const sub = `${run.date ?? new Date().toISOString().slice(0, 10)} · ${run.images} concurrent clients × ${run.size / 1024 / 1024} MiB layer · median of ${run.rounds} rounds, whisker = min–max${loads.length ? ` · load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : ""}`;
  out.push(`<text x="16" y="44" fill="#555">${esc(sub)}</text>`);
  for (const [i, phase] of (["push", "pull"] as const).entries()) {
    out.push(`<rect x="${W - 220 + i * 100}" y="52" width="12" height="12" fill="${colors[phase]}"/><text x="${W - 203 + i * 100}" y="62">${phase} MiB/s</text>`);
  }
  out.push(`<line x1="${left}" y1="${top + ph}" x2="${W - 30}" y2="${top + ph}" stroke="#999"/><line x1="${left}" y1="${top}" x2="${left}" y2="${top + ph}" stroke="#999"/>`);
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    const v = (yMax / 1.15) * t;
    out.push(`<line x1="${left - 4}" y1="${yOf(v).toFixed(1)}" x2="${W - 30}" y2="${yOf(v).toFixed(1)}" stroke="#eee"/><text x="${left - 8}" y="${(yOf(v) + 4).toFixed(1)}" text-anchor="end" fill="#555" font-size="11">${v.toFixed(0)}</text>`);
  }
  stats.forEach((s, gi) => {
    const gx = left + gi * groupW + groupW / 2;
    const barW = Math.min(70, groupW / 3.5);
    for (const [i, phase] of (["push", "pull"] as const).entries()) {
      const xs = s[phase];
      const mid = median(xs);
      const x = gx + (i === 0 ? -barW - 4 : 4);
      out.push(`<rect x="${x.toFixed(1)}" y="${yOf(mid).toFixed(1)}" width="${barW.toFixed(1)}" height="${(top + ph - yOf(mid)).toFixed(1)}" fill="${colors[phase]}"/>`);
      const cx = x + barW / 2;
      out.push(`<line x1="${cx.toFixed(1)}" y1="${yOf(Math.min(...xs)).toFixed(1)}" x2="${cx.toFixed(1)}" y2="${yOf(Math.max(...xs)).toFixed(1)}" stroke="#222" stroke-width="1.5"/>`);
      out.push(`<text x="${cx.toFixed(1)}" y="${(yOf(Math.max(...xs)) - 6).toFixed(1)}" text-anchor="middle" font-size="11">${mid.toFixed(0)}</text>`);
    }
    out.push(`<text x="${gx.toFixed(1)}" y="${top + ph + 18}" text-anchor="middle">${s.n} process${s.n > 1 ? "es" : ""}</text>`);
  });
  out.push(`<text x="16" y="${H - 30}" fill="#555" font-size="11">${esc(run.env)}</text>`);
  out.push(`<text x="16" y="${H - 14}" fill="#555" font-size="11">${esc("Every pushed image pulled back, digests verified, through nginx and from each process directly. 2 cores shared with other jobs: throughput follows the rig's CPU share (docs/performance.md).")}</text>`);
  out.push("</svg>");
  return out.join("\n") + "\n";
}
