/**
 * registry-kit against CNCF Distribution 2.8 (Debian's `docker-registry`),
 * side by side, on this machine, in one run.
 *
 *   npm run bench            # full: 256 MiB and 1 GiB blobs, 5 repetitions, wrk 10 s
 *   npm run bench:quick      # regression guard: 16/64 MiB, 3 repetitions, wrk 3 s (about a minute)
 *   node --import tsx bench/run.ts [--quick] [--profile] [--reps N] [--sizes 256,1024 (MiB)] [--only upload,download,http,tokens,ceilings,startup] [--node-flags "…"]
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
 * heap, and `--max-semi-space-size=4`, which keeps the young generation (and
 * with it the peak RSS under load) small (see docs/performance.md, "Node flags"). The bare node:http ceiling
 * runs without flags.
 *
 * Installs nothing: a missing program is named with its Debian package and the
 * run exits with status 2.
 */
import { spawn } from "node:child_process";
import { createHash, createPrivateKey, randomBytes, randomFillSync, sign as nodeSign } from "node:crypto";
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { cpus, freemem, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { stringify } from "yaml";
import { generateSigningKeyPem, type JwsAlgorithm } from "../src/auth/index.js";
import { ISSUER, SERVICE, benchAuth } from "./bench-auth.js";
import { writeChart } from "./chart.js";
import { chunkedUpload, download, getFile, monolithicUpload, pushSmallBlob, putFile, send } from "./http.js";
import { atExit, cpuOf, cpuOfTree, freePort, rssOf, installExitHooks, requireTools, runCmd, sampleRss, sleep, startServer, wrk, type Server } from "./proc.js";
import { startSink, type Sink } from "./sink.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const MiB = 1024 * 1024;

// ---------------------------------------------------------------- options
const argv = process.argv.slice(2);
const QUICK = argv.includes("--quick");
const PROFILE = argv.includes("--profile");
const argValue = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const ALL_PARTS = "upload,download,http,tokens,ceilings,startup";
const ONLY = new Set((argValue("--only") ?? ALL_PARTS).split(","));
const REPS = Number(argValue("--reps") ?? (QUICK ? 3 : 5));
const SIZES = argValue("--sizes")?.split(",").map((x) => Number(x) * MiB) ?? (QUICK ? [16 * MiB, 64 * MiB] : [256 * MiB, 1024 * MiB]);
const CHUNK = QUICK ? 4 * MiB : 16 * MiB;
const WRK_SECONDS = QUICK ? 3 : 10;
const WRK = { threads: 2, connections: 50 };
const TOKEN_SECONDS = QUICK ? 1 : 3;
const MODE = QUICK ? "quick" : "full";
const SOURCE = argv.includes("--source");
/** Node flags for registry-kit's server processes: those `npm start` uses (package.json). */
const DEFAULT_NODE_FLAGS = "--initial-old-space-size=64 --max-semi-space-size=4";
const NODE_FLAGS = (argValue("--node-flags") ?? DEFAULT_NODE_FLAGS).split(" ").filter(Boolean);
/** Directory for each server's whole output (e.g. with `--node-flags "… --trace-gc"`); off by default. */
const SERVER_LOGS = argValue("--server-logs");

const REPOS = ["bench/mono", "bench/chunked", "bench/app"];

// ---------------------------------------------------------------- results
type Who = "registry-kit" | "distribution";
interface Metric {
  id: string;
  group: "upload" | "download" | "http" | "memory" | "tokens" | "startup";
  label: string;
  unit: string;
  /** true: bigger is better (rates); false: smaller is better (memory). */
  higherIsBetter: boolean;
  rk: number;
  dist?: number;
  /** registry-kit / Distribution. */
  ratio?: number;
  samples?: { rk: number[]; dist?: number[] };
  target?: string;
  met?: boolean;
  note?: string;
}
const metrics: Metric[] = [];
const ceilings: Record<string, { value: number; unit: string; label: string }> = {};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmtSize = (bytes: number): string => (bytes >= 1024 * MiB ? `${bytes / 1024 / MiB} GiB` : `${bytes / MiB} MiB`);
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const log = (s: string): void => console.log(s);

// ---------------------------------------------------------------- set-up
installExitHooks();
const tools = requireTools(["docker-registry", "wrk", "curl", "dd", "sync"]);
const started = new Date();
const loadAtStart = loadavg();
const work = mkdtempSync(join(tmpdir(), "rk-bench-"));
atExit(() => rmSync(work, { recursive: true, force: true }));

// The library under test: built as published (ESM, no declarations), or the sources.
const LIB = SOURCE ? undefined : join(HERE, ".dist");
if (LIB) {
  const built = await runCmd(process.execPath, [join(ROOT, "node_modules", "tsup", "dist", "cli-default.js"), "--no-dts", "--format", "esm", "-d", LIB, "--silent"], 120_000);
  if (built.code !== 0) throw new Error(`tsup build failed:\n${built.stdout}\n${built.stderr}`);
}
/**
 * How a bench server process runs bench/server.ts. With the build, as
 * JavaScript (esbuild strips the types; it imports only node: modules and the
 * build): under `--import tsx` every server carried tsx's module-loader thread,
 * 27-33 MiB of RSS that is not registry-kit's (measured: 87-91 against 58-60
 * MiB at rest). `--source` keeps tsx, which it needs for the sources.
 */
const SERVER_SCRIPT: string[] = LIB ? [join(LIB, "bench-server.mjs")] : ["--import", "tsx", join(HERE, "server.ts")];
if (LIB) {
  const { build } = await import("esbuild");
  await build({ entryPoints: [join(HERE, "server.ts")], outfile: SERVER_SCRIPT[0], format: "esm", platform: "node", logLevel: "error" });
}

log(`registry-kit bench (${MODE}) — ${started.toISOString()}`);
log(`machine: ${cpus().length} cpu (${cpus()[0]?.model ?? "?"}), ${round(totalmem() / 1024 ** 3)} GiB RAM (${round(freemem() / 1024 ** 3)} free), node ${process.version}, load ${loadAtStart.map((x) => x.toFixed(2)).join(" ")}`);
log(`registry-kit: ${LIB ? `the library built by tsup into ${LIB}` : "the TypeScript sources through tsx (--source)"}; node flags: ${NODE_FLAGS.join(" ") || "none"}`);
log(`work dir ${work}; ${REPS} repetitions; sizes ${SIZES.map(fmtSize).join(", ")}; chunk ${fmtSize(CHUNK)}; wrk -t${WRK.threads} -c${WRK.connections} -d${WRK_SECONDS}s\n`);

// One key, one certificate, one token for both registries.
const { keyPem, certPath, token, headers: AUTH } = await benchAuth(work, REPOS);
const realm = "http://127.0.0.1:1/token"; // never called: the bench hands out its token itself

// Random payloads, generated once, hashed while written.
function randomFile(size: number): { path: string; digest: string; size: number } {
  const path = join(work, `blob-${fmtSize(size).replace(" ", "")}.bin`);
  const fd = openSync(path, "w");
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(4 * MiB);
  for (let done = 0; done < size; ) {
    const n = Math.min(buf.length, size - done);
    randomFillSync(buf, 0, n);
    hash.update(buf.subarray(0, n));
    writeSync(fd, buf, 0, n);
    done += n;
  }
  closeSync(fd);
  return { path, digest: `sha256:${hash.digest("hex")}`, size };
}

/** Where a server's output goes with --server-logs (created on first use). */
function serverLog(name: string): string | undefined {
  if (SERVER_LOGS === undefined) return undefined;
  mkdirSync(SERVER_LOGS, { recursive: true });
  return join(SERVER_LOGS, `${name}.log`);
}

/** registry-kit's bench server; `notify`: its events go to this webhook sink through the durable outbox (RK_BENCH_NOTIFY). */
async function startRegistryKit(workers = 1, notify?: Sink): Promise<Server> {
  const port = await freePort();
  const config = join(work, `registry-kit-${port}.json`);
  const root = join(work, `registry-kit-data-${port}`);
  writeFileSync(config, JSON.stringify({ root, port, workers, uploadSecret: randomBytes(32).toString("hex"), auth: { realm, service: SERVICE, issuer: ISSUER, rootcertbundle: certPath } }));
  const nodeArgs = [...NODE_FLAGS];
  if (PROFILE) {
    const dir = join(HERE, "profiles");
    mkdirSync(dir, { recursive: true });
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
  }
  return startServer(workers > 1 ? `registry-kit ×${workers}` : notify ? "registry-kit with a sink" : "registry-kit", process.execPath, [...nodeArgs, ...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, probe, {
    cwd: ROOT,
    env: { ...(LIB ? { RK_BENCH_LIB: LIB } : {}), ...(notify ? { RK_BENCH_NOTIFY: notify.url } : {}) },
    logFile: serverLog(`registry-kit-${workers}-${port}`),
  });
}

async function startDistribution(): Promise<Server> {
  const port = await freePort();
  const dir = join(work, "distribution");
  mkdirSync(dir, { recursive: true });
  const config = {
    version: 0.1,
    // access log off and errors only: registry-kit writes no per-request log either
    log: { level: "error", formatter: "text", accesslog: { disabled: true } },
    storage: {
      filesystem: { rootdirectory: join(dir, "data") },
      delete: { enabled: true },
      cache: { blobdescriptor: "inmemory" },
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { addr: `127.0.0.1:${port}`, secret: randomBytes(16).toString("hex") },
    auth: { token: { realm, service: SERVICE, issuer: ISSUER, rootcertbundle: certPath } },
  };
  const path = join(dir, "config.yml");
  writeFileSync(path, stringify(config));
  return startServer("distribution", tools["docker-registry"]!, ["serve", path], `http://127.0.0.1:${port}`, probe, { cwd: dir, logFile: serverLog(`distribution-${port}`) });
}

/** The upload ceiling of a bare node:http server here: hash, write, fdatasync each PUT body (bench/server.ts `pipeline`). */
async function startPipeline(): Promise<Server> {
  const port = await freePort();
  const config = join(work, "pipeline.json");
  writeFileSync(config, JSON.stringify({ pipeline: true, root: join(work, "pipeline-data"), port }));
  return startServer("node:http pipeline", process.execPath, [...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, async (u) => (await fetch(u, { method: "PUT", body: "" })).status === 201, {
    cwd: ROOT,
    env: LIB ? { RK_BENCH_LIB: LIB } : {},
  });
}

async function startHello(): Promise<Server> {
  const port = await freePort();
  const config = join(work, "hello.json");
  writeFileSync(config, JSON.stringify({ hello: true, port }));
  return startServer("node:http hello", process.execPath, [...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, async (u) => (await fetch(u)).ok, { cwd: ROOT, env: LIB ? { RK_BENCH_LIB: LIB } : {} });
}

async function probe(url: string): Promise<boolean> {
  const r = await fetch(`${url}/v2/`, { headers: AUTH });
  await r.arrayBuffer();
  return r.status === 200;
}

// ---------------------------------------------------------------- ceilings
/** Write `mib` MiB to a new file without syncing; the system CPU seconds per GiB it took. */
function pageCacheWrite(file: string, mib: number): number {
  const buf = randomBytes(MiB);
  const fd = openSync(file, "w");
  try {
    const before = process.cpuUsage();
    for (let i = 0; i < mib; i++) writeSync(fd, buf);
    return process.cpuUsage(before).system / 1e6 / (mib / 1024);
  } finally {
    closeSync(fd);
  }
}

async function measureCeilings(): Promise<void> {
  log("== machine ceilings");
  {
    const buf = randomBytes(MiB);
    const total = QUICK ? 256 : 1024;
    const t0 = performance.now();
    const h = createHash("sha256");
    for (let i = 0; i < total; i++) h.update(buf);
    h.digest();
    const v = total / ((performance.now() - t0) / 1000);
    ceilings.sha256 = { value: round(v), unit: "MiB/s", label: "node:crypto SHA-256 (1 MiB updates)" };
  }
  {
    const count = QUICK ? 256 : 1024;
    const file = join(work, "dd.bin");
    const t0 = performance.now();
    const r = await runCmd(tools.dd!, ["if=/dev/zero", `of=${file}`, "bs=1M", `count=${count}`, "conv=fdatasync"]);
    const secs = (performance.now() - t0) / 1000;
    rmSync(file, { force: true });
    if (r.code !== 0) throw new Error(`dd failed: ${r.stderr}`);
    ceilings.disk = { value: round(count / secs), unit: "MiB/s", label: `disk write, dd ${count} MiB conv=fdatasync` };
  }
  {
    // The kernel's CPU cost of taking written bytes into the page cache, which both
    // registries pay for every byte pushed. On a VM that hands free memory back to its
    // host (virtio-balloon free page reporting), a page the guest must fault in again
    // costs several times more than one freed a moment ago: measured both ways, with
    // 1 GiB in quick runs too (smaller frees are not always handed back within seconds).
    const count = 1024;
    const first = join(work, "page-cache-1.bin");
    const second = join(work, "page-cache-2.bin");
    await sleep(5_000); // long enough for the dd file's freed pages to be handed back on this VM
    const settled = pageCacheWrite(first, count);
    rmSync(first, { force: true });
    const reused = pageCacheWrite(second, count);
    rmSync(second, { force: true });
    const label = (when: string): string => `page-cache write, pages freed ${when}, system CPU`;
    ceilings.pageCacheSettled = { value: round(settled, 2), unit: "s/GiB", label: label("≥ 5 s before") };
    ceilings.pageCacheReused = { value: round(reused, 2), unit: "s/GiB", label: label("just before") };
  }
  {
    const hello = await startHello();
    try {
      await wrk(tools.wrk!, `${hello.url}/`, { ...WRK, seconds: 1 });
      const cpu0 = cpuOf(hello.pid);
      const r = await wrk(tools.wrk!, `${hello.url}/`, { ...WRK, seconds: WRK_SECONDS });
      ceilings.hello = { value: round(r.requestsPerSec, 0), unit: "req/s", label: `bare node:http hello-world (wrk -t2 -c50)` };
      ceilings.helloCpu = { value: round(((cpuOf(hello.pid) - cpu0) / Math.max(1, r.requests)) * 1e6, 0), unit: "µs/req", label: "bare node:http hello-world, server CPU" };
    } finally {
      await hello.stop();
    }
  }
  for (const c of Object.values(ceilings)) log(`  ${c.label.padEnd(58)} ${String(c.value).padStart(10)} ${c.unit}`);
  log("");
}

// ---------------------------------------------------------------- transfers
interface TransferSample {
  mibps: number;
  growth: number;
  peak: number;
  cpu: number;
}

async function transfer(server: Server, size: number, run: () => Promise<number>): Promise<TransferSample> {
  // Start from a clean page cache: Distribution leaves its uploads to the kernel's
  // writeback (it never fsyncs), which would otherwise land, up to 30 s later, on
  // whichever transfer runs then, registry-kit's or its own. Not timed.
  const flushed = await runCmd(tools.sync!, []);
  if (flushed.code !== 0) throw new Error(`sync failed: ${flushed.stderr}`);
  const sampler = sampleRss(server.pid, 50);
  let secs: number;
  try {
    secs = await run();
  } catch (error) {
    sampler.stop(); // its timer would otherwise keep polling /proc
    throw error;
  }
  const r = sampler.stop();
  return { mibps: size / MiB / secs, growth: r.growth, peak: r.peak, cpu: r.cpuSeconds };
}

function addTransferMetrics(id: string, label: string, group: "upload" | "download", size: number, rk: TransferSample[], dist: TransferSample[], minRatio: number): void {
  const rkV = median(rk.map((x) => x.mibps));
  const dV = median(dist.map((x) => x.mibps));
  const ratio = rkV / dV;
  metrics.push({
    id,
    group,
    label,
    unit: "MiB/s",
    higherIsBetter: true,
    rk: round(rkV),
    dist: round(dV),
    ratio: round(ratio, 2),
    samples: { rk: rk.map((x) => round(x.mibps)), dist: dist.map((x) => round(x.mibps)) },
    target: `≥ ${minRatio.toFixed(1)}×`,
    met: ratio >= minRatio,
    note: `server CPU s/GiB: rk ${round(median(rk.map((x) => x.cpu)) / (size / 1024 / MiB), 2)}, dist ${round(median(dist.map((x) => x.cpu)) / (size / 1024 / MiB), 2)}`,
  });
  const big = size >= SIZES[SIZES.length - 1]!;
  const g = (xs: TransferSample[]): number => Math.max(...xs.map((x) => x.growth)) / MiB;
  const p = (xs: TransferSample[]): number => Math.max(...xs.map((x) => x.peak)) / MiB;
  metrics.push({
    id: `${id}.rss`,
    group: "memory",
    label: `${label}: RSS growth (max of reps)`,
    unit: "MiB",
    higherIsBetter: false,
    rk: round(g(rk)),
    dist: round(g(dist)),
    ratio: g(dist) > 0 ? round(g(rk) / g(dist), 2) : undefined,
    target: big ? "< 30 MiB" : undefined,
    met: big ? g(rk) < 30 : undefined,
    note: `peak RSS: rk ${round(p(rk))} MiB, dist ${round(p(dist))} MiB`,
  });
}

/** registry-kit's peak RSS during a phase against its RSS at rest 2 s after start (target: at most 16 MiB above). */
function addPeakMetric(id: string, when: string, rest: number, peak: number): void {
  const above = (peak - rest) / MiB;
  metrics.push({
    id, group: "memory", label: `peak RSS ${when}, above RSS at rest after start`, unit: "MiB", higherIsBetter: false, rk: round(above),
    target: "≤ 16 MiB", met: above <= 16, note: `peak ${round(peak / MiB)} MiB, at rest 2 s after start ${round(rest / MiB)} MiB`,
  });
}

/** MiB/s of `dd` writing `size` bytes with `conv=fdatasync` into the work dir (the registries' disk). */
async function ddRate(size: number): Promise<number> {
  const file = join(work, "dd-size.bin");
  const t0 = performance.now();
  const r = await runCmd(tools.dd!, ["if=/dev/zero", `of=${file}`, "bs=1M", `count=${Math.ceil(size / MiB)}`, "conv=fdatasync"]);
  const secs = (performance.now() - t0) / 1000;
  rmSync(file, { force: true });
  if (r.code !== 0) throw new Error(`dd failed: ${r.stderr}`);
  return size / MiB / secs;
}

/** registry-kit's upload rate against dd's for the same size in the same repetitions (target ≥ 90 %). */
function addDiskRatio(id: string, label: string, rk: TransferSample[], dd: number[], target = true): void {
  const rkV = median(rk.map((x) => x.mibps));
  const ddV = median(dd);
  metrics.push({
    id, group: "upload", label, unit: "MiB/s", higherIsBetter: true, rk: round(rkV), ratio: round(rkV / ddV, 2),
    samples: { rk: rk.map((x) => round(x.mibps)) },
    ...(target ? { target: "≥ 0.9× dd", met: rkV / ddV >= 0.9 } : {}),
    note: `dd conv=fdatasync of the same size in the same repetitions: ${round(ddV)} MiB/s (samples ${dd.map((x) => round(x)).join(", ")})`,
  });
}

async function measureTransfers(rk: Server, dist: Server): Promise<void> {
  const both: Array<[Who, Server]> = [["registry-kit", rk], ["distribution", dist]];
  // warm-up: one small push/pull each, so the first timed transfer pays no start-up cost
  const warm = randomFile(4 * MiB);
  for (const [, s] of both) {
    await monolithicUpload(tools.curl!, s.url, "bench/mono", AUTH, warm.path, warm.digest);
    await chunkedUpload(s.url, "bench/chunked", AUTH, warm.path, warm.size, warm.digest, MiB);
    await download(tools.curl!, s.url, "bench/mono", AUTH, warm.digest, warm.size);
  }
  const pipeline = await startPipeline();
  try {
    // the ceilings' server gets the same warm-up
    await putFile(tools.curl!, `${pipeline.url}/`, warm.path);
    await getFile(tools.curl!, `${pipeline.url}/`, warm.path, warm.size);
    for (const size of SIZES) await measureSize(size, both, pipeline);
  } finally {
    await pipeline.stop();
  }
}

async function measureSize(size: number, both: Array<[Who, Server]>, pipeline: Server): Promise<void> {
  {
    const blob = randomFile(size);
    const name = fmtSize(size);
    const res = {
      mono: { "registry-kit": [] as TransferSample[], distribution: [] as TransferSample[] },
      chunked: { "registry-kit": [] as TransferSample[], distribution: [] as TransferSample[] },
      download: { "registry-kit": [] as TransferSample[], distribution: [] as TransferSample[] },
    };
    const ddRates: number[] = [];
    const pipelineRates: TransferSample[] = [];
    const pipelineDownloads: TransferSample[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const order = rep % 2 === 0 ? both : [...both].reverse();
      // The disk's ceiling for this size, in this repetition: dd of as many bytes with fdatasync;
      // and what a bare node:http server does with the same body (hash, write, fdatasync).
      if (ONLY.has("upload")) {
        ddRates.push(await ddRate(size));
        pipelineRates.push(await transfer(pipeline, size, () => putFile(tools.curl!, `${pipeline.url}/`, blob.path)));
      }
      for (const [who, s] of order) {
        if (ONLY.has("upload")) {
          res.mono[who].push(await transfer(s, size, () => monolithicUpload(tools.curl!, s.url, "bench/mono", AUTH, blob.path, blob.digest)));
          res.chunked[who].push(await transfer(s, size, () => chunkedUpload(s.url, "bench/chunked", AUTH, blob.path, size, blob.digest, CHUNK)));
        } else if (rep === 0) {
          await monolithicUpload(tools.curl!, s.url, "bench/mono", AUTH, blob.path, blob.digest);
        }
        if (ONLY.has("download")) {
          res.download[who].push(await transfer(s, size, () => download(tools.curl!, s.url, "bench/mono", AUTH, blob.digest, size)));
        }
      }
      // What a bare node:http server sends of the same file here (the download ceiling).
      if (ONLY.has("download")) pipelineDownloads.push(await transfer(pipeline, size, () => getFile(tools.curl!, `${pipeline.url}/`, blob.path, size)));
      const last = (k: keyof typeof res): string =>
        res[k]["registry-kit"].length ? `${k} ${round(res[k]["registry-kit"].at(-1)!.mibps, 0)}/${round(res[k].distribution.at(-1)!.mibps, 0)}` : "";
      log(`  ${name} rep ${rep + 1}/${REPS} (MiB/s rk/dist): ${[last("mono"), last("chunked"), last("download")].filter(Boolean).join(", ")}`);
    }
    rmSync(blob.path, { force: true });
    if (ONLY.has("upload")) {
      addTransferMetrics(`upload.mono.${name}`, `monolithic upload ${name} (POST + PUT ?digest=)`, "upload", size, res.mono["registry-kit"], res.mono.distribution, 2.0);
      addTransferMetrics(`upload.chunked.${name}`, `chunked upload ${name} (PATCH ${fmtSize(CHUNK)} chunks)`, "upload", size, res.chunked["registry-kit"], res.chunked.distribution, 2.0);
      addDiskRatio(`upload.pipeline.${name}.disk`, `ceiling: node:http hash + write + fdatasync ${name} / dd`, pipelineRates, ddRates, false);
      addDiskRatio(`upload.mono.${name}.disk`, `monolithic upload ${name} / dd conv=fdatasync`, res.mono["registry-kit"], ddRates);
      addDiskRatio(`upload.chunked.${name}.disk`, `chunked upload ${name} / dd conv=fdatasync`, res.chunked["registry-kit"], ddRates);
    }
    if (ONLY.has("download")) {
      addTransferMetrics(`download.${name}`, `blob download ${name}`, "download", size, res.download["registry-kit"], res.download.distribution, 1.0);
      const ceiling = median(pipelineDownloads.map((x) => x.mibps));
      const distV = median(res.download.distribution.map((x) => x.mibps));
      metrics.push({
        id: `download.pipeline.${name}`, group: "download", label: `ceiling: bare node:http file download ${name} (1 MiB reads) / Distribution`, unit: "MiB/s", higherIsBetter: true,
        rk: round(ceiling), ratio: round(ceiling / distV, 2), samples: { rk: pipelineDownloads.map((x) => round(x.mibps)) },
        note: `registry-kit's download is ${round(median(res.download["registry-kit"].map((x) => x.mibps)) / ceiling, 2)}× this ceiling; Distribution ${round(distV)} MiB/s`,
      });
    }
  }
}

// ---------------------------------------------------------------- small requests
function manifestFixture(): { config: Buffer; layer: Buffer; manifest: Buffer } {
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }));
  const layer = randomBytes(1024);
  const d = (b: Buffer): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: d(config), size: config.length },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: d(layer), size: layer.length }],
    }),
  );
  return { config, layer, manifest };
}

async function measureHttp(rk: Server, dist: Server): Promise<void> {
  const fx = manifestFixture();
  const d = (b: Buffer): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  // Distribution's Go runtime serves on every core; a Node process on one. The same
  // registry in one process per core (node:cluster) is measured too, as a deployment would run it.
  const workers = cpus().length;
  const rkAll = await startRegistryKit(workers);
  // The same registry with a webhook sink (issue 18: within 10 % of the figure without one), measured in the same repetitions.
  const sink = await startSink();
  const rkSink = await startRegistryKit(1, sink);
  for (const s of [rk, dist, rkAll, rkSink]) {
    await pushSmallBlob(s.url, "bench/app", AUTH, fx.config, d(fx.config));
    await pushSmallBlob(s.url, "bench/app", AUTH, fx.layer, d(fx.layer));
    const r = await send("PUT", `${s.url}/v2/bench/app/manifests/latest`, { ...AUTH, "content-type": "application/vnd.oci.image.manifest.v1+json" }, fx.manifest);
    if (r.status !== 201) throw new Error(`manifest PUT to ${s.name}: ${r.status} ${r.body.toString()}`);
    const g = await send("GET", `${s.url}/v2/bench/app/manifests/latest`, { ...AUTH, accept: "application/vnd.oci.image.manifest.v1+json" });
    if (g.status !== 200 || !g.body.equals(fx.manifest)) throw new Error(`manifest GET from ${s.name} did not return the bytes pushed (${g.status})`);
  }
  const cases = [
    { id: "http.manifest", label: "manifest GET by tag, bearer token (wrk)", headers: [`Authorization: Bearer ${token}`, "Accept: application/vnd.oci.image.manifest.v1+json"], expect2xx: true },
    { id: "http.challenge", label: "401 challenge, no token (wrk)", headers: ["Accept: application/vnd.oci.image.manifest.v1+json"], expect2xx: false },
  ];
  // The machine's ceiling for this case: a bare node:http hello-world under exactly the
  // same wrk flags, path and headers, measured in the same repetitions (issue 22).
  const hello = await startHello();
  for (const c of cases) {
    type Runner = Who | "with a sink";
    const out: Record<Runner, number[]> = { "registry-kit": [], distribution: [], "with a sink": [] };
    const cpuPerReq: Record<Runner, number[]> = { "registry-kit": [], distribution: [], "with a sink": [] };
    const helloRates: number[] = [];
    const reps = QUICK ? 1 : 3;
    const runners: Array<[Runner, Server]> = [["registry-kit", rk], ...(c.id === "http.manifest" ? [["with a sink", rkSink] as [Runner, Server]] : []), ["distribution", dist]];
    for (let rep = 0; rep < reps; rep++) {
      for (const [who, s] of rep % 2 === 0 ? runners : [...runners].reverse()) {
        const url = `${s.url}/v2/bench/app/manifests/latest`;
        if (rep === 0) await wrk(tools.wrk!, url, { ...WRK, seconds: 1, headers: c.headers }); // warm-up
        const cpu0 = cpuOf(s.pid);
        const r = await wrk(tools.wrk!, url, { ...WRK, seconds: WRK_SECONDS, headers: c.headers });
        cpuPerReq[who].push(((cpuOf(s.pid) - cpu0) / Math.max(1, r.requests)) * 1e6);
        if (c.expect2xx && r.non2xx > 0) throw new Error(`${c.id} on ${who}: ${r.non2xx} non-2xx answers`);
        if (!c.expect2xx && r.non2xx < r.requests * 0.99) throw new Error(`${c.id} on ${who}: expected 401s, got only ${r.non2xx} of ${r.requests}`);
        if (r.errors > 0) log(`  warning: ${c.id} on ${who}: ${r.errors} socket errors`);
        out[who].push(r.requestsPerSec);
        log(`  ${c.id} ${who}: ${Math.round(r.requestsPerSec)} req/s (p50 ${r.latencyP50}, p99 ${r.latencyP99}), server CPU ${Math.round(cpuPerReq[who].at(-1)!)} µs/req`);
      }
      const helloUrl = `${hello.url}/v2/bench/app/manifests/latest`;
      if (rep === 0) await wrk(tools.wrk!, helloUrl, { ...WRK, seconds: 1, headers: c.headers });
      const h = await wrk(tools.wrk!, helloUrl, { ...WRK, seconds: WRK_SECONDS, headers: c.headers });
      helloRates.push(h.requestsPerSec);
      log(`  ${c.id} bare node:http, same flags: ${Math.round(h.requestsPerSec)} req/s`);
    }
    if (c.id === "http.manifest") addSinkMetric(out, cpuPerReq, sink);
    const rkV = median(out["registry-kit"]);
    const dV = median(out.distribution);
    const helloV = median(helloRates);
    const m: Metric = { id: c.id, group: "http", label: c.label, unit: "req/s", higherIsBetter: true, rk: round(rkV, 0), dist: round(dV, 0), ratio: round(rkV / dV, 2), samples: { rk: out["registry-kit"].map((x) => round(x, 0)), dist: out.distribution.map((x) => round(x, 0)) } };
    m.note = `server CPU per request: rk ${Math.round(median(cpuPerReq["registry-kit"]))} µs, dist ${Math.round(median(cpuPerReq.distribution))} µs; ${round((rkV / helloV) * 100)} % of bare node:http under the same wrk flags (${Math.round(helloV)} req/s, samples ${helloRates.map((x) => Math.round(x)).join(", ")})`;
    m.target = "≥ 50 % of bare node:http (same flags, same run)";
    m.met = rkV / helloV >= 0.5;
    metrics.push(m);
    if (c.id === "http.manifest") await measureManifestAllCores(rkAll, c.headers, dV, median(out["registry-kit"]));
  }
  await rkAll.stop();
  await rkSink.stop();
  sink.close();
  await hello.stop();
}

/** The manifest GET with a webhook sink against the same registry without one, from the same repetitions. */
function addSinkMetric(rates: Record<"registry-kit" | "with a sink", number[]>, cpu: Record<"registry-kit" | "with a sink", number[]>, sink: Sink): void {
  const without = median(rates["registry-kit"]);
  const withSink = median(rates["with a sink"]);
  const cpuWithout = median(cpu["registry-kit"]);
  const cpuWith = median(cpu["with a sink"]);
  metrics.push({
    id: "http.manifest.sink",
    group: "http",
    label: "manifest GET by tag with a webhook sink (every pull through the durable outbox) / without",
    unit: "req/s",
    higherIsBetter: true,
    rk: round(withSink, 0),
    ratio: round(withSink / without, 2),
    samples: { rk: rates["with a sink"].map((x) => round(x, 0)) },
    target: "≥ 0.9× without a sink (same run)",
    met: withSink / without >= 0.9,
    note: `without a sink ${Math.round(without)} req/s (samples ${rates["registry-kit"].map((x) => Math.round(x)).join(", ")}); server CPU per request ${Math.round(cpuWith)} µs with, ${Math.round(cpuWithout)} µs without (${round(cpuWith / cpuWithout, 2)}×); the sink received ${sink.events()} events${sink.malformed() > 0 ? `, ${sink.malformed()} malformed bodies` : ""}`,
  });
}

/** The manifest GET against registry-kit in one process per core, beside the one-process figures. */
async function measureManifestAllCores(s: Server, headers: string[], distRate: number, oneProcess: number): Promise<void> {
  const url = `${s.url}/v2/bench/app/manifests/latest`;
  await wrk(tools.wrk!, url, { ...WRK, seconds: 1, headers });
  const rates: number[] = [];
  const cpus: number[] = [];
  for (let rep = 0; rep < (QUICK ? 1 : 3); rep++) {
    const cpu0 = cpuOfTree(s.pid);
    const r = await wrk(tools.wrk!, url, { ...WRK, seconds: WRK_SECONDS, headers });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`http.manifest on ${s.name}: ${r.non2xx} non-2xx answers, ${r.errors} socket errors`);
    rates.push(r.requestsPerSec);
    cpus.push(((cpuOfTree(s.pid) - cpu0) / Math.max(1, r.requests)) * 1e6);
    log(`  http.manifest ${s.name}: ${Math.round(r.requestsPerSec)} req/s (p50 ${r.latencyP50}, p99 ${r.latencyP99}), server CPU ${Math.round(cpus.at(-1)!)} µs/req`);
  }
  const v = median(rates);
  metrics.push({
    id: "http.manifest.all-cores",
    group: "http",
    label: `manifest GET by tag, bearer token, registry-kit in ${s.name.split("×")[1]} processes (node:cluster, one per core, as Distribution uses every core)`,
    unit: "req/s",
    higherIsBetter: true,
    rk: round(v, 0),
    dist: round(distRate, 0),
    ratio: round(v / distRate, 2),
    samples: { rk: rates.map((x) => round(x, 0)) },
    target: "≥ 10×",
    met: v / distRate >= 10,
    note: `server CPU per request (all processes) ${Math.round(median(cpus))} µs; ${round(v / oneProcess, 2)}× the one-process rate`,
  });
}

// ---------------------------------------------------------------- tokens
async function rateConcurrent(fn: () => Promise<unknown>, seconds: number, concurrency: number): Promise<number> {
  await Promise.all(Array.from({ length: concurrency }, fn));
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let n = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await fn();
      n++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return n / ((performance.now() - t0) / 1000);
}

function syncRate(fn: () => unknown, seconds: number): number {
  for (let i = 0; i < 20; i++) fn();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    fn();
    n++;
  }
  return n / ((performance.now() - t0) / 1000);
}

/** Concurrent token requests in the issuance measurement (wrk connections, async signs in flight). */
const TOKEN_CONCURRENCY = 16;

/**
 * Token issuance as deployed: the token service served by registry-kit/node
 * in its own process, asked by wrk over loopback (anonymous GET, one scope),
 * against raw node:crypto signing of the same bytes in this process: the
 * plain synchronous `sign()` on one thread, and 16 callback `sign()`s in
 * flight on the thread pool (every core, no HTTP).
 */
async function measureTokens(): Promise<void> {
  log("== token issuance (the token service over HTTP; Distribution has no token service)");
  // signJwt of the library under test (the build, as the servers run it), for the in-process ratio.
  const lib = (LIB ? await import(pathToFileURL(join(LIB, "auth", "index.js")).href) : await import("../src/auth/index.js")) as typeof import("../src/auth/index.js");
  // The HTTP part of a token's cost: bare node:http under the same wrk flags as the token service.
  const hello = await startHello();
  let helloRate: number;
  try {
    await wrk(tools.wrk!, `${hello.url}/token`, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: 1 });
    helloRate = (await wrk(tools.wrk!, `${hello.url}/token`, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: WRK_SECONDS })).requestsPerSec;
  } finally {
    await hello.stop();
  }
  log(`  bare node:http, wrk -t1 -c${TOKEN_CONCURRENCY}: ${Math.round(helloRate)} req/s`);
  for (const alg of ["RS256", "ES256", "EdDSA"] as Array<Exclude<JwsAlgorithm, "HS256">>) {
    const pem = alg === "RS256" ? keyPem : await generateSigningKeyPem({ alg });
    const dir = join(work, `tokens-${alg}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "key.pem"), pem.privateKey);
    writeFileSync(join(dir, "cert.pem"), pem.certificate);
    const port = await freePort();
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ port, tokens: { service: SERVICE, issuer: ISSUER, privateKey: join(dir, "key.pem"), certificate: join(dir, "cert.pem") } }));
    const server = await startServer(`token service ${alg}`, process.execPath, [...NODE_FLAGS, ...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, async (u) => (await fetch(`${u}/token`)).ok, {
      cwd: ROOT,
      env: LIB ? { RK_BENCH_LIB: LIB } : {},
    });
    try {
      const url = `${server.url}/token?service=${SERVICE}&scope=repository:bench/app:pull`;
      // the same bytes the service signs: a fresh token's signing input
      const sample = (await (await fetch(url)).json()) as { token?: string };
      if (!sample.token) throw new Error(`token service refused: ${JSON.stringify(sample)}`);
      const input = Buffer.from(sample.token.slice(0, sample.token.lastIndexOf(".")));
      const priv = createPrivateKey(pem.privateKey);
      const opts = alg === "ES256" ? { dsaEncoding: "ieee-p1363" as const } : {};
      const hash = alg === "EdDSA" ? null : "sha256";
      const rawSync = syncRate(() => nodeSign(hash, input, { key: priv, ...opts }), TOKEN_SECONDS);
      const inProcess = await signJwtVsRaw(lib, pem, alg, () => nodeSign(hash, input, { key: priv, ...opts }));
      const rawAsync = await rateConcurrent(
        () => new Promise<void>((res, rej) => nodeSign(hash, input, { key: priv, ...opts }, (e) => (e ? rej(e) : res()))),
        TOKEN_SECONDS,
        TOKEN_CONCURRENCY,
      );
      await wrk(tools.wrk!, url, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: 1 });
      const rates: number[] = [];
      const cpus: number[] = [];
      for (let rep = 0; rep < (QUICK ? 1 : 3); rep++) {
        const cpu0 = cpuOf(server.pid);
        const r = await wrk(tools.wrk!, url, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: WRK_SECONDS });
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`token service ${alg}: ${r.non2xx} non-2xx answers, ${r.errors} socket errors`);
        rates.push(r.requestsPerSec);
        cpus.push(((cpuOf(server.pid) - cpu0) / Math.max(1, r.requests)) * 1e6);
      }
      const one = await wrk(tools.wrk!, url, { threads: 1, connections: 1, seconds: QUICK ? 1 : 3 });
      const svc = median(rates);
      const cpu = median(cpus);
      log(`  ${alg}: signJwt in process ${inProcess.ratios.map((r) => `${r}×`).join(", ")} raw sign() per CPU second (${inProcess.cpu.map((c) => `${c} µs`).join(", ")} a token)`);
      metrics.push({
        id: `tokens.${alg}.in-process`,
        group: "tokens",
        label: `${alg} signJwt in process, per CPU second, against raw node:crypto sign()`,
        unit: "×",
        higherIsBetter: true,
        rk: median(inProcess.ratios),
        samples: { rk: inProcess.ratios },
        target: "≥ 0.90 × raw node:crypto sign",
        met: median(inProcess.ratios) >= 0.9,
        note: `signJwt ${inProcess.cpu.join(" / ")} µs of CPU a token, raw sign() ${inProcess.rawCpu.join(" / ")} µs, back to back in ${inProcess.ratios.length} rounds (RSA: the pool thread's CPU counted)`,
      });
      log(`  ${alg}: token service ${Math.round(svc)}/s (${TOKEN_CONCURRENCY} connections, server CPU ${Math.round(cpu)} µs/token; one connection ${Math.round(one.requestsPerSec)}/s) vs raw node:crypto sign ${Math.round(rawSync)}/s on one thread, ${Math.round(rawAsync)}/s ${TOKEN_CONCURRENCY} in flight on the thread pool`);
      metrics.push({
        id: `tokens.${alg}`,
        group: "tokens",
        label: `${alg} token issuance, token service over HTTP (anonymous GET, 1 scope, ${TOKEN_CONCURRENCY} connections)`,
        unit: "tokens/s",
        higherIsBetter: true,
        rk: round(svc, 0),
        ratio: round(svc / rawSync, 2),
        samples: { rk: rates.map((x) => round(x, 0)) },
        target: alg === "RS256" ? "≥ 0.90 × raw node:crypto sign" : undefined,
        met: alg === "RS256" ? svc / rawSync >= 0.9 : undefined,
        // Over HTTP a token costs its signature plus a whole request: for a signature of tens of µs the
        // request is most of it, so the bound is the bare node:http rate combined with the signing rate.
        note: `ratio against node:crypto sign() on one thread (${Math.round(rawSync)}/s); one event loop that answers bare node:http at ${Math.round(helloRate)}/s and signs in its own thread tops out at ${Math.round(1 / (1 / helloRate + 1 / rawSync))}/s (${round(1 / (1 / helloRate + 1 / rawSync) / rawSync, 2)}× raw), the service reaches ${round((svc * (1 / helloRate + 1 / rawSync)) * 100, 0)} % of that; against ${TOKEN_CONCURRENCY} callback sign()s in flight on the thread pool, every core, no HTTP (${Math.round(rawAsync)}/s): ${round(svc / rawAsync, 2)}×; server CPU ${Math.round(cpu)} µs per token; one connection at a time: ${Math.round(one.requestsPerSec)}/s (${round(one.requestsPerSec / rawSync, 2)}×)`,
      });
    } finally {
      await server.stop();
    }
  }
  log("");
}

/**
 * The issuance code's own cost over the signature: signJwt of the library
 * under test against raw node:crypto `sign()` of the same bytes, one call at a
 * time, in calls per second of this process's CPU (every thread, so RSA's pool
 * signs count), back to back in 3 rounds so the machine's load falls on both.
 */
async function signJwtVsRaw(
  lib: typeof import("../src/auth/index.js"),
  pem: { privateKey: string; certificate: string },
  alg: Exclude<JwsAlgorithm, "HS256">,
  raw: () => unknown,
): Promise<{ ratios: number[]; cpu: number[]; rawCpu: number[] }> {
  const key = await lib.pemKeys({ ...pem, alg }).signingKey();
  const claims = { iss: ISSUER, sub: "", aud: SERVICE, exp: 2_000_000_000, nbf: 0, iat: 0, jti: "0123456789abcdefghijkl", access: [{ type: "repository", name: "bench/app", actions: ["pull"] }] };
  const perCpuSecond = async (fn: () => unknown): Promise<number> => {
    for (let i = 0; i < 50; i++) await fn();
    const c0 = process.cpuUsage();
    const end = performance.now() + TOKEN_SECONDS * 1000;
    let n = 0;
    while (performance.now() < end) {
      await fn();
      n++;
    }
    const c = process.cpuUsage(c0);
    return n / ((c.user + c.system) / 1e6);
  };
  const out = { ratios: [] as number[], cpu: [] as number[], rawCpu: [] as number[] };
  for (let r = 0; r < 3; r++) {
    const a = await perCpuSecond(() => lib.signJwt(claims, key, { x5c: false }));
    const b = await perCpuSecond(raw);
    out.ratios.push(round(a / b, 2));
    out.cpu.push(round(1e6 / a, 1));
    out.rawCpu.push(round(1e6 / b, 1));
  }
  return out;
}

// ---------------------------------------------------------------- start-up
/**
 * `registry-kit serve config.yml` (the all-in-one, with the token service and
 * users API, on fs storage) started on existing data the way users start it,
 * `node bin/registry-kit.mjs serve` (here over the bench's build: the one-file
 * CLI bundle): milliseconds from spawn to the first answer on `/v2/` that is
 * not the 503 the listener gives while the all-in-one is still being built,
 * the process's CPU by then, and its RSS at rest 2 s and 20 s later (V8's
 * memory reducer gives back the start-up garbage in between). Beside it in the
 * same rounds: `node -e 0` (the runtime's own start) and the floor of any
 * fetch-style server, a bare `node:http` server answering its first request
 * with a `Response` (which loads undici). The first start, which creates the
 * signing key and the data and writes the CLI's V8 code cache, is not timed.
 */
async function measureStartup(): Promise<void> {
  log("== start-up and RSS at rest (registry-kit serve, existing data)");
  const dir = join(work, "startup");
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const config = join(dir, "config.yml");
  writeFileSync(config, stringify({ version: 0.1, log: { level: "error" }, http: { addr: `127.0.0.1:${port}` }, storage: { filesystem: { rootdirectory: join(dir, "data") } }, registrykit: { keydirectory: join(dir, "keys"), tokenservice: {}, users: {} } }));
  const args = [...NODE_FLAGS, LIB ? packageOf(LIB, join(work, "startup-package")) : join(ROOT, "bin", "registry-kit.mjs"), "serve", config];
  const floor = join(dir, "floor.mjs");
  writeFileSync(floor, `import { createServer } from "node:http";\ncreateServer(async (req, res) => { const r = new Response("{}", { status: 401 }); res.writeHead(r.status); res.end(await r.text()); }).listen(${port}, "127.0.0.1");\n`);
  /** Spawn to the first answer on /v2/ that is not a 503 (and to the first answer at all). */
  const ready = async (child: ReturnType<typeof spawn>, t0: number): Promise<{ ms: number; firstMs: number }> => {
    let firstMs: number | undefined;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v2/`);
        await res.arrayBuffer();
        firstMs ??= performance.now() - t0;
        if (res.status !== 503) return { ms: performance.now() - t0, firstMs };
      } catch {
        if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before answering`);
      }
      await sleep(2);
    }
  };
  const once = async (withRss: boolean, argv = args, warmUp = false): Promise<{ ms: number; firstMs: number; cpuMs: number; rss2: number; rss: number }> => {
    const t0 = performance.now();
    // The bin's V8 code cache of the CLI bundle (src/cli/code-cache.ts) in this run's own folder, not the user's.
    const child = spawn(process.execPath, argv, { cwd: dir, env: { ...process.env, XDG_CACHE_HOME: join(dir, "cache") }, stdio: ["ignore", "ignore", "ignore"] });
    try {
      const { ms, firstMs } = await ready(child, t0);
      const cpuMs = cpuOf(child.pid!) * 1000;
      if (!withRss) {
        if (warmUp) await sleep(1_500); // the first start writes the code cache 1 s after it is ready
        return { ms, firstMs, cpuMs, rss2: 0, rss: 0 };
      }
      await sleep(2_000);
      const rss2 = rssOf(child.pid!) / MiB;
      await sleep(18_000);
      return { ms, firstMs, cpuMs, rss2, rss: rssOf(child.pid!) / MiB };
    } finally {
      child.kill("SIGTERM");
      if (child.exitCode === null) await new Promise((res) => child.once("exit", res));
    }
  };
  const nodeAlone = async (): Promise<number> => {
    const t0 = performance.now();
    await runCmd(process.execPath, ["-e", "0"]);
    return performance.now() - t0;
  };
  await once(false, args, true); // creates the key and the data, and the bin's code cache of the CLI bundle
  // `registry-kit serve` as a user types it (no node flags: any V8 heap flag makes V8 refuse the
  // code cache of Node's own built-ins, ~30 ms more CPU per start); its own code cache too.
  const plainArgs = args.slice(NODE_FLAGS.length);
  if (NODE_FLAGS.length > 0) await once(false, plainArgs, true);
  const plain: Array<{ ms: number; cpuMs: number }> = [];
  const runs: Array<{ ms: number; firstMs: number; cpuMs: number; rss2: number; rss: number }> = [];
  const bare: number[] = [];
  const floors: Array<{ ms: number; cpuMs: number }> = [];
  for (let i = 0; i < 3; i++) {
    runs.push(await once(true));
    bare.push(await nodeAlone());
    floors.push(await once(false, [floor]));
    if (NODE_FLAGS.length > 0) plain.push(await once(false, plainArgs));
    const r = runs.at(-1)!;
    log(`  ready ${Math.round(r.ms)} ms (first answer, 503 while starting: ${Math.round(r.firstMs)} ms; CPU ${Math.round(r.cpuMs)} ms), RSS at rest ${round(r.rss2)} MiB after 2 s, ${round(r.rss)} after 20 s; node -e 0: ${Math.round(bare.at(-1)!)} ms; bare node:http + Response: ${Math.round(floors.at(-1)!.ms)} ms (CPU ${Math.round(floors.at(-1)!.cpuMs)} ms)${plain.length ? `; without node flags: ${Math.round(plain.at(-1)!.ms)} ms (CPU ${Math.round(plain.at(-1)!.cpuMs)} ms)` : ""}; load ${loadavg()[0]!.toFixed(1)}`);
  }
  const ms = median(runs.map((r) => r.ms));
  const rss = median(runs.map((r) => r.rss));
  const whole = (xs: number[]): string => xs.map((x) => Math.round(x)).join(" / ");
  metrics.push({
    id: "startup.ready",
    group: "startup",
    label: "registry-kit serve: spawn to the first non-503 answer on /v2/ (existing data)",
    unit: "ms",
    higherIsBetter: false,
    rk: round(ms, 0),
    samples: { rk: runs.map((r) => round(r.ms, 0)) },
    target: "≤ 150 ms",
    met: ms <= 150,
    note: `process CPU by then ${whole(runs.map((r) => r.cpuMs))} ms; above node -e 0 ${whole(runs.map((r, i) => r.ms - bare[i]!))} ms; in the same rounds node -e 0 alone ${whole(bare)} ms, a bare node:http server's first Response ${whole(floors.map((f) => f.ms))} ms (CPU ${whole(floors.map((f) => f.cpuMs))} ms)`,
  });
  if (plain.length > 0) {
    metrics.push({
      id: "startup.ready-no-flags",
      group: "startup",
      label: "registry-kit serve without node flags (as installed): spawn to the first non-503 answer",
      unit: "ms",
      higherIsBetter: false,
      rk: round(median(plain.map((p) => p.ms)), 0),
      samples: { rk: plain.map((p) => round(p.ms, 0)) },
      target: "≤ 150 ms",
      met: median(plain.map((p) => p.ms)) <= 150,
      note: `process CPU by then ${whole(plain.map((p) => p.cpuMs))} ms; the same rounds with ${NODE_FLAGS.join(" ")}: ${whole(runs.map((r) => r.ms))} ms (CPU ${whole(runs.map((r) => r.cpuMs))} ms)`,
    });
  }
  metrics.push({
    id: "startup.rss",
    group: "startup",
    label: "registry-kit serve: RSS at rest, 20 s after the first answer",
    unit: "MiB",
    higherIsBetter: false,
    rk: round(rss),
    samples: { rk: runs.map((r) => round(r.rss)) },
    target: "≤ 60 MiB",
    met: rss <= 60,
    note: `2 s after the first answer: ${runs.map((r) => round(r.rss2)).join(" / ")} MiB`,
  });
  log("");
}

/**
 * The bench's build laid out as the installed package (bin/, dist/ → the
 * build, node_modules/ → this checkout's), so that the start measured is
 * `node bin/registry-kit.mjs` on the build; returns that bin.
 */
function packageOf(lib: string, dir: string): string {
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(join(ROOT, "bin", "registry-kit.mjs"), join(dir, "bin", "registry-kit.mjs"));
  copyFileSync(join(ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(lib, join(dir, "dist"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return join(dir, "bin", "registry-kit.mjs");
}

// ---------------------------------------------------------------- main
let rk: Server | undefined;
let dist: Server | undefined;
try {
  if (ONLY.has("ceilings")) await measureCeilings();
  if (ONLY.has("startup")) await measureStartup();
  if (ONLY.has("tokens")) await measureTokens();
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
