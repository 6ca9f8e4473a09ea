/**
 * The S3 section of the bench (issue 47): registry-kit and Distribution 2.8 on
 * one radosgw (scripts/s3-server/start-rgw.sh, memstore OSD), each with its own
 * bucket, blob redirects off, side by side in one run (alternating within each
 * repetition): monolithic and chunked pushes, blob GETs through the registry,
 * the server CPU per GiB of a GET, and each phase's peak RSS. Each target is
 * printed with its ratio. The request counts per operation are pinned by
 * test/storage/s3-requests.test.ts.
 *
 *   node --import tsx bench/run.ts --only s3 [--s3-sizes 256 (MiB)] [--reps N]
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { AwsV4Signer } from "aws4fetch";
import { chunkedUpload, download, monolithicUpload } from "../http.js";
import { atExit, sleep, type Server } from "../proc.js";
import { argValue, AUTH, CHUNK, MiB, QUICK, REPS, ROOT, type BenchBucket, type Who, fmtSize, log, median, metrics, randomFile, round, startDistribution, startRegistryKit, tools, work } from "./context.js";
import { addTransferMetrics, transfer, type TransferSample } from "./transfers.js";

const run = promisify(execFile);
const SCRIPTS = join(ROOT, "scripts", "s3-server");
const S3_SIZES = argValue("--s3-sizes")?.split(",").map((x) => Number(x) * MiB) ?? (QUICK ? [64 * MiB] : [256 * MiB]);

/** Start radosgw in the work dir (stopped at exit) and create one bucket per registry. */
async function startRadosgw(): Promise<{ bucket: (name: string) => Promise<BenchBucket>; stop: () => Promise<void> }> {
  const dir = join(work, "rgw");
  mkdirSync(dir, { recursive: true });
  const env = { ...process.env, RGW_DIR: join(dir, "rgw"), RGW_OSD_BYTES: String(12 * 1024 * MiB) };
  try {
    await run("bash", [join(SCRIPTS, "start-rgw.sh")], { env, timeout: 180_000 });
  } catch (error) {
    throw new Error(`radosgw did not start (apt-get install radosgw ceph-mon ceph-osd): ${String((error as { stderr?: string }).stderr ?? error).slice(-1500)}`);
  }
  const stop = async (): Promise<void> => {
    await run("bash", [join(SCRIPTS, "stop-rgw.sh")], { env, timeout: 60_000 }).catch(() => {});
  };
  atExit(() => void stop());
  const vars = Object.fromEntries(readFileSync(join(env.RGW_DIR, "env"), "utf8").split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
  const base = { endpoint: vars.S3_ENDPOINT!, region: vars.AWS_DEFAULT_REGION ?? "us-east-1", accessKeyId: vars.AWS_ACCESS_KEY_ID!, secretAccessKey: vars.AWS_SECRET_ACCESS_KEY! };
  const bucket = async (name: string): Promise<BenchBucket> => {
    const signed = await new AwsV4Signer({ method: "PUT", url: `${base.endpoint}/${name}`, accessKeyId: base.accessKeyId, secretAccessKey: base.secretAccessKey, service: "s3", region: base.region }).sign();
    const response = await fetch(signed.url, { method: "PUT", headers: signed.headers });
    if (!response.ok) throw new Error(`creating bucket ${name}: ${response.status} ${await response.text()}`);
    return { ...base, bucket: name };
  };
  return { bucket, stop };
}

/** Run the S3 section: both registries on one radosgw, each target with its ratio. */
export async function measureS3(): Promise<void> {
  log("== S3 (radosgw): registry-kit and Distribution 2.8 on one radosgw, redirects off");
  const rgw = await startRadosgw();
  let rk: Server | undefined;
  let dist: Server | undefined;
  try {
    rk = await startRegistryKit(1, undefined, await rgw.bucket("registry-kit"));
    dist = await startDistribution(await rgw.bucket("distribution"));
    await sleep(2_000);
    const both: Array<[Who, Server]> = [["registry-kit", rk], ["distribution", dist]];
    const warm = randomFile(4 * MiB);
    for (const [, s] of both) {
      await monolithicUpload(tools.curl!, s.url, "bench/mono", AUTH, warm.path, warm.digest);
      await chunkedUpload(s.url, "bench/chunked", AUTH, warm.path, warm.size, warm.digest, MiB);
      await download(tools.curl!, s.url, "bench/mono", AUTH, warm.digest, warm.size);
    }
    for (const size of S3_SIZES) await measureS3Size(size, both);
  } finally {
    await rk?.stop();
    await dist?.stop();
    await rgw.stop();
  }
  log("");
}

async function measureS3Size(size: number, both: Array<[Who, Server]>): Promise<void> {
  const blob = randomFile(size);
  const name = fmtSize(size);
  const empty = (): Record<Who, TransferSample[]> => ({ "registry-kit": [], distribution: [] });
  const res = { mono: empty(), chunked: empty(), download: empty() };
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 === 0 ? both : [...both].reverse();
    for (const [who, s] of order) {
      res.mono[who].push(await transfer(s, size, () => monolithicUpload(tools.curl!, s.url, "bench/mono", AUTH, blob.path, blob.digest)));
      res.chunked[who].push(await transfer(s, size, () => chunkedUpload(s.url, "bench/chunked", AUTH, blob.path, size, blob.digest, CHUNK)));
      res.download[who].push(await transfer(s, size, () => download(tools.curl!, s.url, "bench/mono", AUTH, blob.digest, size)));
    }
    const last = (k: keyof typeof res): string => `${k} ${round(res[k]["registry-kit"].at(-1)!.mibps, 0)}/${round(res[k].distribution.at(-1)!.mibps, 0)}`;
    log(`  s3 ${name} rep ${rep + 1}/${REPS} (MiB/s rk/dist): ${[last("mono"), last("chunked"), last("download")].join(", ")}`);
    // memstore frees deleted data 30-60 s later: give it a moment between repetitions
    await sleep(QUICK ? 1_000 : 5_000);
  }
  addTransferMetrics(`s3.upload.mono.${name}`, `S3: monolithic upload ${name} (POST + PUT ?digest=)`, "upload", size, res.mono["registry-kit"], res.mono.distribution, 1.5);
  addTransferMetrics(`s3.upload.chunked.${name}`, `S3: chunked upload ${name} (PATCH ${fmtSize(CHUNK)} chunks)`, "upload", size, res.chunked["registry-kit"], res.chunked.distribution, 1.5);
  addTransferMetrics(`s3.download.${name}`, `S3: blob GET through the registry ${name}`, "download", size, res.download["registry-kit"], res.download.distribution, 1.0);
  const perGiB = (xs: TransferSample[]): number => median(xs.map((x) => x.cpu)) / (size / 1024 / MiB);
  const cpuRatio = perGiB(res.download["registry-kit"]) / perGiB(res.download.distribution);
  metrics.push({
    id: `s3.download.${name}.cpu`, group: "download", label: `S3: server CPU per GiB of a blob GET ${name}`, unit: "s/GiB", higherIsBetter: false,
    rk: round(perGiB(res.download["registry-kit"]), 2), dist: round(perGiB(res.download.distribution), 2), ratio: round(cpuRatio, 2), target: "≤ 1.0×", met: cpuRatio <= 1,
  });
  for (const phase of ["mono", "chunked", "download"] as const) {
    const peak = (xs: TransferSample[]): number => Math.max(...xs.map((x) => x.peak)) / MiB;
    const ratio = peak(res[phase]["registry-kit"]) / peak(res[phase].distribution);
    metrics.push({
      id: `s3.${phase}.${name}.peak`, group: "memory", label: `S3: peak RSS during ${phase === "download" ? "blob GETs" : `${phase} uploads`} ${name}`, unit: "MiB", higherIsBetter: false,
      rk: round(peak(res[phase]["registry-kit"])), dist: round(peak(res[phase].distribution)), ratio: round(ratio, 2), target: "≤ 1.0×", met: ratio <= 1,
    });
  }
}
