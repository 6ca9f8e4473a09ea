/** Uploads and downloads side by side with Distribution, dd and a bare pipeline (bench/run.ts). */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { chunkedUpload, download, getFile, monolithicUpload, putFile } from "../http.js";
import { runCmd, sampleRss, type Server } from "../proc.js";
import { CHUNK, MiB, ONLY, REPS, SIZES, type Who, fmtSize, log, median, metrics, randomFile, round, startPipeline, tools, work, AUTH } from "./context.js";

// ---------------------------------------------------------------- transfers
export interface TransferSample {
  mibps: number;
  growth: number;
  peak: number;
  cpu: number;
}

export async function transfer(server: Server, size: number, run: () => Promise<number>): Promise<TransferSample> {
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

export function addTransferMetrics(id: string, label: string, group: "upload" | "download", size: number, rk: TransferSample[], dist: TransferSample[], minRatio: number): void {
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
export function addPeakMetric(id: string, when: string, rest: number, peak: number): void {
  const above = (peak - rest) / MiB;
  metrics.push({
    id, group: "memory", label: `peak RSS ${when}, above RSS at rest after start`, unit: "MiB", higherIsBetter: false, rk: round(above),
    target: "≤ 16 MiB", met: above <= 16, note: `peak ${round(peak / MiB)} MiB, at rest 2 s after start ${round(rest / MiB)} MiB`,
  });
}

/**
 * MiB/s of `dd` writing `size` bytes with `conv=fdatasync` into the work dir (the registries' disk); with
 * `syncEvery`, in blocks of that many bytes each written with O_DSYNC (`oflag=dsync`): durable block by block, as
 * a chunked upload is durable at each PATCH it acknowledges.
 */
export async function ddRate(size: number, syncEvery?: number): Promise<number> {
  const file = join(work, "dd-size.bin");
  const t0 = performance.now();
  const args = syncEvery ? [`bs=${syncEvery / MiB}M`, `count=${Math.ceil(size / syncEvery)}`, "oflag=dsync"] : ["bs=1M", `count=${Math.ceil(size / MiB)}`, "conv=fdatasync"];
  const r = await runCmd(tools.dd!, ["if=/dev/zero", `of=${file}`, ...args]);
  const secs = (performance.now() - t0) / 1000;
  rmSync(file, { force: true });
  if (r.code !== 0) throw new Error(`dd failed: ${r.stderr}`);
  return size / MiB / secs;
}

/** registry-kit's upload rate against dd's for the same size in the same repetitions (target ≥ 90 %). */
export function addDiskRatio(id: string, label: string, rk: TransferSample[], dd: number[], target = true): void {
  const rkV = median(rk.map((x) => x.mibps));
  const ddV = median(dd);
  metrics.push({
    id, group: "upload", label, unit: "MiB/s", higherIsBetter: true, rk: round(rkV), ratio: round(rkV / ddV, 2),
    samples: { rk: rk.map((x) => round(x.mibps)) },
    ...(target ? { target: "≥ 0.9× dd", met: rkV / ddV >= 0.9 } : {}),
    note: `dd conv=fdatasync of the same size in the same repetitions: ${round(ddV)} MiB/s (samples ${dd.map((x) => round(x)).join(", ")})`,
  });
}

export async function measureTransfers(rk: Server, dist: Server): Promise<void> {
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

export async function measureSize(size: number, both: Array<[Who, Server]>, pipeline: Server): Promise<void> {
  {
    const blob = randomFile(size);
    const name = fmtSize(size);
    const res = {
      mono: { "registry-kit": [] as TransferSample[], distribution: [] as TransferSample[] },
      chunked: { "registry-kit": [] as TransferSample[], distribution: [] as TransferSample[] },
      download: { "registry-kit": [] as TransferSample[], distribution: [] as TransferSample[] },
    };
    const ddRates: number[] = [];
    const ddChunkSyncRates: number[] = [];
    const pipelineRates: TransferSample[] = [];
    const pipelineDownloads: TransferSample[] = [];
    const memoryDownloads: TransferSample[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const order = rep % 2 === 0 ? both : [...both].reverse();
      // The disk's ceiling for this size, in this repetition: dd of as many bytes with fdatasync;
      // and what a bare node:http server does with the same body (hash, write, fdatasync).
      if (ONLY.has("upload")) {
        ddRates.push(await ddRate(size));
        ddChunkSyncRates.push(await ddRate(size, CHUNK));
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
      // And what curl receives at all: the same bytes from memory, no file read.
      if (ONLY.has("download")) memoryDownloads.push(await transfer(pipeline, size, () => getFile(tools.curl!, `${pipeline.url}/`, undefined, size)));
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
      // Not the target's reference: the disk's own rate with the durability a chunked upload promises (each PATCH
      // acknowledged is on disk), to read the ratio above against.
      const chunkSync = median(ddChunkSyncRates);
      metrics.push({
        id: `upload.chunked.${name}.dd-dsync`, group: "upload", label: `ceiling: dd oflag=dsync bs=${fmtSize(CHUNK)} ${name} / dd conv=fdatasync`, unit: "MiB/s", higherIsBetter: true,
        rk: round(chunkSync), ratio: round(chunkSync / median(ddRates), 2), samples: { rk: ddChunkSyncRates.map((x) => round(x)) },
        note: `a sync every ${fmtSize(CHUNK)} as each acknowledged PATCH requires; the chunked upload is ${round(median(res.chunked["registry-kit"].map((x) => x.mibps)) / chunkSync, 2)}× this`,
      });
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
      const client = median(memoryDownloads.map((x) => x.mibps));
      metrics.push({
        id: `download.client.${name}`, group: "download", label: `ceiling: curl receiving ${name} from node:http sending from memory / Distribution`, unit: "MiB/s", higherIsBetter: true,
        rk: round(client), ratio: round(client / distV, 2), samples: { rk: memoryDownloads.map((x) => round(x.mibps)) },
        note: `no file read at all: what the client takes here; a server sending a file cannot be faster than this (the target, 2× Distribution, is ${round(2 * distV)} MiB/s)`,
      });
    }
  }
}
