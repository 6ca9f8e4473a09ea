/**
 * Two builds of registry-kit side by side: is a change a regression?
 *
 *   node --import tsx bench/compare.ts --base <git ref> [--head <git ref>] [--reps 6] [--size-mib 64] [--wrk-seconds 3] [--profile]
 *     [--only chunked,monolithic,manifest,challenge] [--head-env K=V …] [--base-env K=V …]   (e.g. --head-env RK_BENCH_NOTIFY=sink: head sends events to a webhook;
 *     --head-env "RK_NODE_FLAGS=--max-semi-space-size=4": head's Node flags instead of npm start's)
 *
 * Each ref is checked out into a temporary git worktree and built by its own
 * tsup config (ESM, no declarations); without `--head` the working tree is
 * built. Both servers (bench/server.ts of this checkout, composed the same way
 * on each build: fs storage, token auth with one RSA key) are up at once, and
 * every repetition measures base and head back to back, in alternating order,
 * so load from elsewhere on the machine falls on both alike. Measured per
 * repetition: a chunked upload (4 MiB PATCHes), a monolithic upload,
 * manifest GETs with a bearer token and the same GETs without one (the 401
 * challenge) under wrk -t2 -c50; the server's CPU comes from /proc. Prints medians, ranges and head/base ratios; writes nothing
 * but, with RK_LOGDIR=<dir>, each server's output into <dir>/base.log and <dir>/head.log (e.g. with `--trace-gc-nvp` in
 * RK_NODE_FLAGS, to compare the collector's work).
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes, randomFillSync } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ISSUER, SERVICE, benchAuth } from "./bench-auth.js";
import { chunkedUpload, monolithicUpload, pushSmallBlob, send } from "./http.js";
import { atExit, cpuOf, freePort, installExitHooks, requireTools, runCmd, startServer, wrk, type Server } from "./proc.js";
import { NPM_START_NODE_FLAGS } from "./node-flags.js";
import { startSink, type Sink } from "./sink.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const MiB = 1024 * 1024;
const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const BASE = arg("--base");
const HEAD = arg("--head");
const REPS = Number(arg("--reps") ?? 6);
const SIZE = Number(arg("--size-mib") ?? 64) * MiB;
const WRK_SECONDS = Number(arg("--wrk-seconds") ?? 3);
/** `--profile`: run both servers with `--cpu-prof` into bench/profiles/compare-{base,head}/ (see bench/profile-summary.ts). */
const PROFILE = argv.includes("--profile");
/** `--head-env K=V` (repeatable): extra environment of the head server, e.g. `RK_BENCH_NOTIFY=sink` (a webhook sink this script runs). */
const envOf = (flag: string): Record<string, string> =>
  Object.fromEntries(argv.flatMap((a, i) => (a === flag ? [argv[i + 1]!.split(/=(.*)/s).slice(0, 2)] : [])));
const HEAD_ENV = envOf("--head-env");
/** `--base-env K=V` (repeatable): the same for the base server, e.g. to compare two settings of one build. */
const BASE_ENV = envOf("--base-env");
const ONLY = new Set((arg("--only") ?? "chunked,monolithic,manifest").split(","));
if (!BASE) {
  console.error("usage: node --import tsx bench/compare.ts --base <git ref> [--head <git ref>] [--reps N] [--size-mib N] [--wrk-seconds N]");
  process.exit(2);
}

installExitHooks();
const tools = requireTools(["wrk", "curl"]);
const work = mkdtempSync(join(tmpdir(), "rk-compare-"));
atExit(() => rmSync(work, { recursive: true, force: true }));

/** Build `ref` (or the working tree) with its own tsup config; returns the output directory. */
async function build(ref: string | undefined, name: string): Promise<string> {
  let dir = ROOT;
  if (ref !== undefined) {
    dir = join(work, `src-${name}`);
    const added = await runCmd("git", ["-C", ROOT, "worktree", "add", "--detach", dir, ref]);
    if (added.code !== 0) throw new Error(`git worktree add ${ref}: ${added.stderr}`);
    atExit(() => execFileSync("git", ["-C", ROOT, "worktree", "remove", "--force", dir], { stdio: "ignore" }));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  }
  // Inside the checkout, so that the build resolves its dependencies from node_modules.
  const out = join(dir, "bench", `.dist-${name}`);
  const built = await runCmd(process.execPath, [join(ROOT, "node_modules", "tsup", "dist", "cli-default.js"), "--no-dts", "--format", "esm", "-d", out, "--silent"], 180_000, dir);
  if (built.code !== 0) throw new Error(`tsup build of ${ref ?? "the working tree"} failed:\n${built.stdout}\n${built.stderr}`);
  return out;
}

function randomFile(size: number): { path: string; digest: string } {
  const path = join(work, "blob.bin");
  const fd = openSync(path, "w");
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(4 * MiB);
  for (let done = 0; done < size; done += buf.length) {
    randomFillSync(buf);
    const part = buf.subarray(0, Math.min(buf.length, size - done));
    hash.update(part);
    writeSync(fd, part);
  }
  closeSync(fd);
  return { path, digest: `sha256:${hash.digest("hex")}` };
}

const { certPath, token, headers: AUTH } = await benchAuth(work, ["bench/app", "bench/chunked", "bench/mono"]);

async function startBuild(lib: string, name: string, env: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const config = join(work, `${name}.json`);
  writeFileSync(config, JSON.stringify({
    root: join(work, `data-${name}`), port, uploadSecret: randomBytes(32).toString("hex"),
    auth: { realm: "http://127.0.0.1:1/token", service: SERVICE, issuer: ISSUER, rootcertbundle: certPath },
  }));
  const ready = async (url: string): Promise<boolean> => (await send("GET", `${url}/v2/`, AUTH)).status === 200;
  const profile = PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${join(HERE, "profiles", `compare-${name}`)}`] : [];
  // RK_NODE_FLAGS in --base-env / --head-env: that side's Node flags instead of npm start's.
  const flags = env.RK_NODE_FLAGS?.split(" ").filter(Boolean) ?? NPM_START_NODE_FLAGS.split(" ").filter(Boolean);
  return startServer(name, process.execPath, [...flags, ...profile, "--import", "tsx", join(HERE, "server.ts"), config], `http://127.0.0.1:${port}`, ready, {
    cwd: ROOT, env: { RK_BENCH_LIB: lib, ...env }, ...(process.env.RK_LOGDIR ? { logFile: join(process.env.RK_LOGDIR, `${name}.log`) } : {}),
  });
}

/** Push the manifest the wrk case GETs. */
async function seedManifest(s: Server): Promise<void> {
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }));
  const digest = (b: Buffer): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  await pushSmallBlob(s.url, "bench/app", AUTH, config, digest(config));
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: digest(config), size: config.length }, layers: [],
  }));
  const r = await send("PUT", `${s.url}/v2/bench/app/manifests/latest`, { ...AUTH, "content-type": "application/vnd.oci.image.manifest.v1+json" }, manifest);
  if (r.status !== 201) throw new Error(`manifest PUT to ${s.name}: ${r.status}`);
}

type Case = "chunked" | "monolithic" | "manifest" | "challenge";
const UNITS: Record<Case, string> = { chunked: "MiB/s", monolithic: "MiB/s", manifest: "req/s", challenge: "req/s" };
const samples = new Map<string, { rate: number[]; cpu: number[] }>();
const record = (who: string, c: Case, rate: number, cpu: number): void => {
  const key = `${c}/${who}`;
  const entry = samples.get(key) ?? { rate: [], cpu: [] };
  entry.rate.push(rate);
  entry.cpu.push(cpu);
  samples.set(key, entry);
};

/** User and system CPU seconds of `pid` so far. */
function cpuSplit(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

async function upload(s: Server, c: "chunked" | "monolithic", blob: { path: string; digest: string }): Promise<void> {
  const before = cpuSplit(s.pid);
  const secs = c === "chunked"
    ? await chunkedUpload(s.url, "bench/chunked", AUTH, blob.path, SIZE, blob.digest, 4 * MiB)
    : await monolithicUpload(tools.curl!, s.url, "bench/mono", AUTH, blob.path, blob.digest);
  const after = cpuSplit(s.pid);
  const gib = SIZE / 1024 / MiB;
  record(s.name, c, SIZE / MiB / secs, (after.user + after.system - before.user - before.system) / gib);
  systemShare.set(`${c}/${s.name}`, [...(systemShare.get(`${c}/${s.name}`) ?? []), (after.system - before.system) / gib]);
}
const systemShare = new Map<string, number[]>();

async function measure(s: Server, blob: { path: string; digest: string }): Promise<void> {
  if (ONLY.has("chunked")) await upload(s, "chunked", blob);
  if (ONLY.has("monolithic")) await upload(s, "monolithic", blob);
  if (ONLY.has("manifest")) await small(s, "manifest", [`Authorization: Bearer ${token}`]);
  if (ONLY.has("challenge")) await small(s, "challenge", []);
}

/** Manifest GETs under wrk: with the bearer token (all 200), or without it (all 401). */
async function small(s: Server, c: "manifest" | "challenge", auth: string[]): Promise<void> {
  const headers = [...auth, "Accept: application/vnd.oci.image.manifest.v1+json"];
  const cpu0 = cpuOf(s.pid);
  const r = await wrk(tools.wrk!, `${s.url}/v2/bench/app/manifests/latest`, { threads: 2, connections: 50, seconds: WRK_SECONDS, headers });
  if (c === "manifest" ? r.non2xx > 0 : r.non2xx < r.requests) throw new Error(`${c} on ${s.name}: ${r.non2xx} of ${r.requests} non-2xx answers`);
  record(s.name, c, r.requestsPerSec, ((cpuOf(s.pid) - cpu0) / Math.max(1, r.requests)) * 1e6);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (xs: number[], d: number): string => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

console.log(`registry-kit compare: base ${BASE}, head ${HEAD ?? "working tree"}; ${REPS} repetitions; ${SIZE / MiB} MiB blobs; wrk ${WRK_SECONDS} s; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
const [baseLib, headLib] = await Promise.all([build(BASE, "base"), build(HEAD, "head")]);
const sinks = new Map<string, Sink>();
for (const [name, env] of [["base", BASE_ENV], ["head", HEAD_ENV]] as const) {
  if (env.RK_BENCH_NOTIFY !== "sink") continue;
  const sink = await startSink();
  sinks.set(name, sink);
  env.RK_BENCH_NOTIFY = sink.url;
}
const base = await startBuild(baseLib, "base", BASE_ENV);
const head = await startBuild(headLib, "head", HEAD_ENV);
const blob = ONLY.has("chunked") || ONLY.has("monolithic") ? randomFile(SIZE) : { path: "", digest: "" };
for (const s of [base, head]) {
  await seedManifest(s);
  await wrk(tools.wrk!, `${s.url}/v2/bench/app/manifests/latest`, { threads: 2, connections: 50, seconds: 1, headers: [`Authorization: Bearer ${token}`] });
  if (ONLY.has("challenge")) await wrk(tools.wrk!, `${s.url}/v2/bench/app/manifests/latest`, { threads: 2, connections: 50, seconds: 1 });
}
for (let rep = 0; rep < REPS; rep++) {
  for (const s of rep % 2 === 0 ? [base, head] : [head, base]) await measure(s, blob);
  process.stdout.write(`  repetition ${rep + 1}/${REPS} done\n`);
}
await Promise.all([base.stop(), head.stop()]);
for (const [name, sink] of sinks) {
  console.log(`webhook sink received ${sink.events()} events from ${name}${sink.malformed() > 0 ? ` (${sink.malformed()} malformed bodies)` : ""}`);
  sink.close();
}

console.log(`\n${"case".padEnd(12)} ${"base".padEnd(34)} ${"head".padEnd(34)} head/base`);
for (const c of (["chunked", "monolithic", "manifest", "challenge"] as Case[]).filter((x) => ONLY.has(x))) {
  const b = samples.get(`${c}/base`)!;
  const h = samples.get(`${c}/head`)!;
  const cpuUnit = c === "manifest" || c === "challenge" ? "µs/req" : "CPU s/GiB";
  console.log(`${c.padEnd(12)} ${`${fmt(b.rate, 0)} ${UNITS[c]}`.padEnd(34)} ${`${fmt(h.rate, 0)} ${UNITS[c]}`.padEnd(34)} ${(median(h.rate) / median(b.rate)).toFixed(2)}×`);
  console.log(`${"".padEnd(12)} ${`${fmt(b.cpu, 2)} ${cpuUnit}`.padEnd(34)} ${`${fmt(h.cpu, 2)} ${cpuUnit}`.padEnd(34)} ${(median(h.cpu) / median(b.cpu)).toFixed(2)}× CPU`);
  const bs = systemShare.get(`${c}/base`);
  const hs = systemShare.get(`${c}/head`);
  if (bs && hs) console.log(`${"  of which".padEnd(12)} ${`${fmt(bs, 2)} system s/GiB`.padEnd(34)} ${`${fmt(hs, 2)} system s/GiB`.padEnd(34)} ${(median(hs) / median(bs)).toFixed(2)}× system`);
}
