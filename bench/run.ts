/**
 * registry-kit against CNCF Distribution 2.8 (Debian's `docker-registry`),
 * side by side, on this machine, in one run.
 *
 *   npm run bench            # full: 256 MiB and 1 GiB blobs, 5 repetitions, wrk 10 s
 *   npm run bench:quick      # regression guard: 16/64 MiB, 3 repetitions, wrk 3 s (about a minute)
 *   node --import tsx bench/run.ts [--quick] [--profile] [--reps N] [--sizes 256,1024 (MiB)] [--only upload,download,http,tokens,ceilings,startup,s3] [--s3-sizes 256 (MiB)] [--node-flags "…"]
 *
 * Both registries run as child processes on 127.0.0.1 with filesystem storage
 * in temp dirs and token auth with the same RSA key and the same long-lived
 * token. Figures are medians of the repetitions; the two registries alternate
 * within each repetition. Results go to bench/results/<mode>.json; a full run
 * also regenerates docs/performance.svg (bench/chart.ts). `--profile` runs
 * registry-kit's server with `--cpu-prof` into bench/profiles/.
 *
 * registry-kit is measured as users run it: the library built by tsup (into
 * bench/.dist, a few seconds, no type declarations); `--source` runs the
 * TypeScript sources through tsx instead, which is slower (tsx keeps function
 * names with a helper call per closure).
 *
 * registry-kit's processes (registry and token service) start with the Node
 * flags the project recommends for a registry server, `--node-flags` replaces
 * them (`--node-flags ""` for none): `--initial-old-space-size=64`, without
 * which V8 runs a full mark-compact every 20-30 MiB of request body on a small
 * heap, `--max-semi-space-size=2`, which keeps the young generation (and
 * with it the peak RSS under load) small, `--expose-gc`, with which the Node
 * adapter frees request-body buffers every 4 MiB, and
 * `--no-concurrent-recompilation` (no compiler scratch memory kept in thread
 * arenas; see docs/adapters.md and docs/performance.md). The bare node:http ceiling
 * runs without flags.
 *
 * Installs nothing: a missing program is named with its Debian package and the
 * run exits with status 2.
 *
 * This file runs the parts and writes the report; each part is a module of
 * bench/run/ (`ceilings`, `transfers`, `small-requests`, `tokens`, `startup`, `s3`: both registries on one radosgw)
 * over `context.ts` (options, results, set-up, the servers it starts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { writeChart } from "./chart.js";
import { rssOf, sampleRss, sleep, type Server } from "./proc.js";
import { ALL_PARTS, CHUNK, DEFAULT_NODE_FLAGS, HERE, MODE, NODE_FLAGS, ONLY, QUICK, REPS, ROOT, SIZES, WRK_SECONDS, ceilings, fmtSize, loadAtStart, log, metrics, round, startDistribution, startRegistryKit, started, WRK } from "./run/context.js";
import { measureCeilings } from "./run/ceilings.js";
import { addPeakMetric, measureTransfers } from "./run/transfers.js";
import { measureHttp } from "./run/small-requests.js";
import { measureTokens } from "./run/tokens.js";
import { measureStartup } from "./run/startup.js";
import { measureS3 } from "./run/s3.js";

// ---------------------------------------------------------------- main
let rk: Server | undefined;
let dist: Server | undefined;
try {
  if (ONLY.has("ceilings")) await measureCeilings();
  if (ONLY.has("startup")) await measureStartup();
  if (ONLY.has("tokens")) await measureTokens();
  if (ONLY.has("s3")) await measureS3();
  if (ONLY.has("upload") || ONLY.has("download") || ONLY.has("http")) {
    rk = await startRegistryKit();
    dist = await startDistribution();
    log(`registry-kit pid ${rk.pid} at ${rk.url}; distribution pid ${dist.pid} at ${dist.url}\n`);
    await sleep(2_000);
    const rest = rssOf(rk.pid);
    if (ONLY.has("http")) {
      log("== small requests");
      const peak = sampleRss(rk.pid, 50);
      await measureHttp(rk, dist);
      addPeakMetric("memory.peak.http", "under the wrk phases", rest, peak.stop().peak);
      log("");
    }
    if (ONLY.has("upload") || ONLY.has("download")) {
      log("== transfers");
      const peak = sampleRss(rk.pid, 50);
      await measureTransfers(rk, dist);
      addPeakMetric("memory.peak.transfers", `during the transfers (up to ${fmtSize(SIZES.at(-1)!)})`, rest, peak.stop().peak);
      log("");
    }
  }
} finally {
  await rk?.stop();
  await dist?.stop();
}

// ---------------------------------------------------------------- report
const loadAtEnd = loadavg();
const table: string[] = [];
const pad = (s: string, n: number): string => s.padEnd(n);
const num = (x: number | undefined): string => (x === undefined ? "—" : x.toLocaleString("en-US"));
table.push(`${pad("metric", 58)} ${pad("unit", 9)} ${"registry-kit".padStart(13)} ${"Distribution".padStart(13)} ${"ratio".padStart(7)}  target`);
for (const m of metrics) {
  const verdict = m.met === undefined ? "" : m.met ? "  met" : "  NOT met";
  table.push(`${pad(m.label, 58)} ${pad(m.unit, 9)} ${num(m.rk).padStart(13)} ${num(m.dist).padStart(13)} ${(m.ratio === undefined ? "—" : `${m.ratio}×`).padStart(7)}  ${m.target ?? ""}${verdict}`);
  if (m.note) table.push(`${pad("", 60)}${m.note}`);
}
for (const c of Object.values(ceilings)) table.push(`${pad(`ceiling: ${c.label}`, 58)} ${pad(c.unit, 9)} ${num(c.value).padStart(13)}`);
log("== results (medians)");
log(table.join("\n"));
log(`\nload average: start ${loadAtStart.map((x) => x.toFixed(2)).join(" ")}, end ${loadAtEnd.map((x) => x.toFixed(2)).join(" ")}`);

const result = {
  mode: MODE,
  date: started.toISOString(),
  machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? "?", memoryGiB: round(totalmem() / 1024 ** 3), node: process.version, loadAtStart, loadAtEnd },
  method: { reps: REPS, sizes: SIZES, chunk: CHUNK, wrk: { ...WRK, seconds: WRK_SECONDS }, only: [...ONLY], nodeFlags: NODE_FLAGS },
  ceilings,
  metrics,
};
const outDir = join(HERE, "results");
mkdirSync(outDir, { recursive: true });
// A partial run (--only) never replaces the results of a whole one.
const variant = `${ONLY.size === ALL_PARTS.split(",").length ? "" : `-only-${[...ONLY].join("-")}`}${NODE_FLAGS.join(" ") === DEFAULT_NODE_FLAGS ? "" : NODE_FLAGS.length ? "-custom-node-flags" : "-no-node-flags"}`;
const outFile = join(outDir, `${MODE}${variant}.json`);
writeFileSync(outFile, JSON.stringify(result, null, 2) + "\n");
log(`results: ${outFile}`);
if (!QUICK && variant === "") {
  const svg = join(ROOT, "docs", "performance.svg");
  writeChart(result, svg);
  log(`chart: ${svg}`);
}
process.exit(0);
