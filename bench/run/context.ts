/** The bench's options, results, set-up and the servers it starts (bench/run.ts). */
import { createHash, randomBytes, randomFillSync } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { cpus, freemem, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { ISSUER, SERVICE, benchAuth } from "../bench-auth.js";
import { atExit, freePort, installExitHooks, requireTools, runCmd, startServer, type Server } from "../proc.js";
import { NPM_START_NODE_FLAGS } from "../node-flags.js";
import { type Sink } from "../sink.js";

/** bench/, where this module's folder is. */
export const HERE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const ROOT = resolve(HERE, "..");
export const MiB = 1024 * 1024;

// ---------------------------------------------------------------- options
export const argv = process.argv.slice(2);
export const QUICK = argv.includes("--quick");
export const PROFILE = argv.includes("--profile");
export const argValue = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
export const ALL_PARTS = "upload,download,http,tokens,ceilings,startup,s3";
export const ONLY = new Set((argValue("--only") ?? ALL_PARTS).split(","));
export const REPS = Number(argValue("--reps") ?? (QUICK ? 3 : 5));
export const SIZES = argValue("--sizes")?.split(",").map((x) => Number(x) * MiB) ?? (QUICK ? [16 * MiB, 64 * MiB] : [256 * MiB, 1024 * MiB]);
export const CHUNK = QUICK ? 4 * MiB : 16 * MiB;
export const WRK_SECONDS = QUICK ? 3 : 10;
export const WRK = { threads: 2, connections: 50 };
export const TOKEN_SECONDS = QUICK ? 1 : 3;
export const MODE = QUICK ? "quick" : "full";
export const SOURCE = argv.includes("--source");
/** Node flags for registry-kit's server processes: those `npm start` uses (package.json). */
export const DEFAULT_NODE_FLAGS = NPM_START_NODE_FLAGS;
export const NODE_FLAGS = (argValue("--node-flags") ?? DEFAULT_NODE_FLAGS).split(" ").filter(Boolean);
/** Directory for each server's whole output (e.g. with `--node-flags "… --trace-gc"`); off by default. */
export const SERVER_LOGS = argValue("--server-logs");

export const REPOS = ["bench/mono", "bench/chunked", "bench/app"];

// ---------------------------------------------------------------- results
export type Who = "registry-kit" | "distribution";
export interface Metric {
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
export const metrics: Metric[] = [];
export const ceilings: Record<string, { value: number; unit: string; label: string }> = {};

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
export const fmtSize = (bytes: number): string => (bytes >= 1024 * MiB ? `${bytes / 1024 / MiB} GiB` : `${bytes / MiB} MiB`);
export const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
export const log = (s: string): void => console.log(s);

// ---------------------------------------------------------------- set-up
installExitHooks();
export const tools = requireTools(["docker-registry", "wrk", "curl", "dd", "sync"]);
export const started = new Date();
export const loadAtStart = loadavg();
export const work = mkdtempSync(join(tmpdir(), "rk-bench-"));
atExit(() => rmSync(work, { recursive: true, force: true }));

// The library under test: built as published (ESM, no declarations), or the sources.
export const LIB = SOURCE ? undefined : join(HERE, ".dist");
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
export const SERVER_SCRIPT: string[] = LIB ? [join(LIB, "bench-server.mjs")] : ["--import", "tsx", join(HERE, "server.ts")];
if (LIB) {
  const { build } = await import("esbuild");
  await build({ entryPoints: [join(HERE, "server.ts")], outfile: SERVER_SCRIPT[0], format: "esm", platform: "node", logLevel: "error" });
}

log(`registry-kit bench (${MODE}) — ${started.toISOString()}`);
log(`machine: ${cpus().length} cpu (${cpus()[0]?.model ?? "?"}), ${round(totalmem() / 1024 ** 3)} GiB RAM (${round(freemem() / 1024 ** 3)} free), node ${process.version}, load ${loadAtStart.map((x) => x.toFixed(2)).join(" ")}`);
log(`registry-kit: ${LIB ? `the library built by tsup into ${LIB}` : "the TypeScript sources through tsx (--source)"}; node flags: ${NODE_FLAGS.join(" ") || "none"}`);
log(`work dir ${work}; ${REPS} repetitions; sizes ${SIZES.map(fmtSize).join(", ")}; chunk ${fmtSize(CHUNK)}; wrk -t${WRK.threads} -c${WRK.connections} -d${WRK_SECONDS}s\n`);

// One key, one certificate, one token for both registries.
export const { keyPem, certPath, token, headers: AUTH } = await benchAuth(work, REPOS);
export const realm = "http://127.0.0.1:1/token"; // never called: the bench hands out its token itself

// Random payloads, generated once, hashed while written.
export function randomFile(size: number): { path: string; digest: string; size: number } {
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
export function serverLog(name: string): string | undefined {
  if (SERVER_LOGS === undefined) return undefined;
  mkdirSync(SERVER_LOGS, { recursive: true });
  return join(SERVER_LOGS, `${name}.log`);
}

/** A bucket on the bench's radosgw (bench/run/s3.ts). */
export interface BenchBucket {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * registry-kit's bench server; `notify`: its events go to this webhook sink through the durable outbox
 * (RK_BENCH_NOTIFY); `s3`: its storage is that bucket, blob redirects off.
 */
export async function startRegistryKit(workers = 1, notify?: Sink, s3?: BenchBucket): Promise<Server> {
  const port = await freePort();
  const config = join(work, `registry-kit-${port}.json`);
  const root = join(work, `registry-kit-data-${port}`);
  writeFileSync(config, JSON.stringify({ root, port, workers, uploadSecret: randomBytes(32).toString("hex"), auth: { realm, service: SERVICE, issuer: ISSUER, rootcertbundle: certPath }, ...(s3 ? { s3 } : {}) }));
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

/** Distribution 2.8 (Debian's docker-registry); `s3`: its storage is that bucket (path style, redirects off). */
export async function startDistribution(s3?: BenchBucket): Promise<Server> {
  const port = await freePort();
  const dir = join(work, s3 ? "distribution-s3" : "distribution");
  mkdirSync(dir, { recursive: true });
  const config = {
    version: 0.1,
    // access log off and errors only: registry-kit writes no per-request log either
    log: { level: "error", formatter: "text", accesslog: { disabled: true } },
    storage: {
      ...(s3
        ? {
            s3: { region: s3.region, regionendpoint: s3.endpoint, bucket: s3.bucket, accesskey: s3.accessKeyId, secretkey: s3.secretAccessKey, secure: false, v4auth: true },
            redirect: { disable: true },
          }
        : { filesystem: { rootdirectory: join(dir, "data") } }),
      delete: { enabled: true },
      cache: { blobdescriptor: "inmemory" },
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { addr: `127.0.0.1:${port}`, secret: randomBytes(16).toString("hex") },
    auth: { token: { realm, service: SERVICE, issuer: ISSUER, rootcertbundle: certPath } },
  };
  const path = join(dir, "config.yml");
  writeFileSync(path, stringify(config));
  // AWS_CA_BUNDLE (set in some environments) makes Distribution 2.8's S3 driver panic; radosgw is plain http on loopback.
  const env = s3 ? { AWS_CA_BUNDLE: undefined } : {};
  return startServer("distribution", tools["docker-registry"]!, ["serve", path], `http://127.0.0.1:${port}`, probe, { cwd: dir, env, logFile: serverLog(`distribution-${port}`) });
}

/** The upload ceiling of a bare node:http server here: hash, write, fdatasync each PUT body (bench/server.ts `pipeline`). */
export async function startPipeline(): Promise<Server> {
  const port = await freePort();
  const config = join(work, "pipeline.json");
  writeFileSync(config, JSON.stringify({ pipeline: true, root: join(work, "pipeline-data"), port }));
  return startServer("node:http pipeline", process.execPath, [...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, async (u) => (await fetch(u, { method: "PUT", body: "" })).status === 201, {
    cwd: ROOT,
    env: LIB ? { RK_BENCH_LIB: LIB } : {},
  });
}

export async function startHello(): Promise<Server> {
  const port = await freePort();
  const config = join(work, "hello.json");
  writeFileSync(config, JSON.stringify({ hello: true, port }));
  return startServer("node:http hello", process.execPath, [...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, async (u) => (await fetch(u)).ok, { cwd: ROOT, env: LIB ? { RK_BENCH_LIB: LIB } : {} });
}

export async function probe(url: string): Promise<boolean> {
  const r = await fetch(`${url}/v2/`, { headers: AUTH });
  await r.arrayBuffer();
  return r.status === 200;
}
