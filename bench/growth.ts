/**
 * Cost growth (issue 22): does the cost of one page stay flat while the total
 * grows, is the total linear, and does memory stay flat?
 *
 *   node --import tsx bench/growth.ts [--drivers fs,s3] [--sizes 1000,10000,100000] [--referrers 1000] [--no-write]
 *
 * For each storage driver (fs in a temp dir; S3 on a throw-away radosgw) and
 * each size N: N tags paged through `tags/list?n=1000`, N repositories paged
 * through `_catalog?n=1000`, a GC (dry run) over N blobs; and once per driver
 * the referrers of one manifest with `--referrers` referrers. The registry
 * handler is called in process (no HTTP), so the figures are the registry's
 * and the driver's cost alone. Seeding writes the layout's keys straight to the
 * driver (tags, catalog markers, blobs) or pushes through the registry
 * (referrers), and is not timed. Memory: the process's RSS and V8 heap, sampled
 * every 10 ms during each measurement, against their value before it.
 *
 * Writes bench/results/growth.json and, unless --no-write, the section between
 * the growth markers of docs/performance.md (a table per case) and
 * docs/performance-growth.svg (per-page time against N).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { collectGarbage, createRegistry } from "../src/registry/index.js";
import { blobData, catalogEntry, tagLink } from "../src/registry/layout.js";
import type { StorageDriver } from "../src/storage/driver.js";
import { fsStorage } from "../src/storage/fs/index.js";
import { s3Storage } from "../src/storage/s3/index.js";
import { parseDigest } from "../src/oci/digest.js";
import { startRadosgw, type RgwServer } from "../test/interop/helpers/scale-out.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const DRIVERS = (arg("--drivers") ?? "fs,s3").split(",");
const SIZES = (arg("--sizes") ?? "1000,10000,100000").split(",").map(Number);
const REFERRERS = Number(arg("--referrers") ?? 1000);
const WRITE = !argv.includes("--no-write");
const PAGE = 1000;
const SEED_CONCURRENCY = 32;
const MiB = 1024 * 1024;

interface Measure {
  driver: string;
  kind: "tags" | "catalog" | "gc" | "referrers";
  n: number;
  totalMs: number;
  pages: number;
  firstPageMs: number;
  lastPageMs: number;
  medianPageMs: number;
  rssGrowthMiB: number;
  heapGrowthMiB: number;
  /** V8 heap still in use after a full GC at the end, over the value before. */
  heapRetainedMiB: number;
}
const results: Measure[] = [];
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Run `task` over `items`, `SEED_CONCURRENCY` at a time. */
async function inParallel<T>(items: T[], task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

/** Sample RSS and heap while `run` runs; growth over the value before. */
async function sampled<T>(run: () => Promise<T>): Promise<{ value: T; rss: number; heap: number; retained: number }> {
  global.gc?.();
  const rss0 = process.memoryUsage.rss();
  const heap0 = process.memoryUsage().heapUsed;
  let rss = rss0;
  let heap = heap0;
  const timer = setInterval(() => {
    rss = Math.max(rss, process.memoryUsage.rss());
    heap = Math.max(heap, process.memoryUsage().heapUsed);
  }, 10);
  try {
    const value = await run();
    global.gc?.();
    return { value, rss: (rss - rss0) / MiB, heap: (heap - heap0) / MiB, retained: (process.memoryUsage().heapUsed - heap0) / MiB };
  } finally {
    clearInterval(timer);
  }
}

/** Page through `path` (n=PAGE, following Link) and time every page. */
async function pageThrough(registry: (r: Request) => Promise<Response>, path: string, field: "tags" | "repositories"): Promise<{ times: number[]; count: number }> {
  const times: number[] = [];
  let count = 0;
  let next: string | undefined = `${path}?n=${PAGE}`;
  while (next) {
    const t0 = performance.now();
    const res = await registry(new Request(`http://growth.bench${next}`));
    const body = (await res.json()) as Record<string, string[] | undefined>;
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${next}: ${res.status} ${JSON.stringify(body)}`);
    count += body[field]?.length ?? 0;
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  }
  return { times, count };
}

function record(driver: string, kind: Measure["kind"], n: number, times: number[], totalMs: number, mem: { rss: number; heap: number; retained: number }): void {
  const m: Measure = {
    driver, kind, n, totalMs: round(totalMs), pages: times.length,
    firstPageMs: round(times[0] ?? totalMs, 2), lastPageMs: round(times.at(-1) ?? totalMs, 2), medianPageMs: round(median(times.length ? times : [totalMs]), 2),
    rssGrowthMiB: round(mem.rss), heapGrowthMiB: round(mem.heap), heapRetainedMiB: round(mem.retained),
  };
  results.push(m);
  console.log(`  ${driver} ${kind} n=${n}: total ${m.totalMs} ms, ${m.pages} pages (first ${m.firstPageMs}, median ${m.medianPageMs}, last ${m.lastPageMs} ms), RSS +${m.rssGrowthMiB} MiB, heap peak +${m.heapGrowthMiB} MiB, retained ${m.heapRetainedMiB} MiB`);
}

async function measureTags(driver: string, storage: StorageDriver, n: number): Promise<void> {
  const name = `growth/tags-${n}`;
  const digest = `sha256:${"0".repeat(64)}`;
  await storage.write(catalogEntry(name), new TextEncoder().encode(name));
  await inParallel(Array.from({ length: n }, (_, i) => `t${String(i).padStart(7, "0")}`), (tag) => storage.write(tagLink(name, tag), new TextEncoder().encode(digest)));
  const registry = createRegistry({ storage, uploadSecret: "growth-bench-secret-0123456789abcdef" });
  const t0 = performance.now();
  const { value, ...mem } = await sampled(() => pageThrough(registry, `/v2/${name}/tags/list`, "tags"));
  if (value.count !== n) throw new Error(`tags/list returned ${value.count} of ${n} tags`);
  record(driver, "tags", n, value.times, performance.now() - t0, mem);
}

async function measureCatalog(driver: string, storage: StorageDriver, n: number): Promise<void> {
  const names = Array.from({ length: n }, (_, i) => `growth-${n}/r${String(i).padStart(7, "0")}`);
  await inParallel(names, (name) => storage.write(catalogEntry(name), new TextEncoder().encode(name)));
  const registry = createRegistry({ storage, uploadSecret: "growth-bench-secret-0123456789abcdef" });
  const t0 = performance.now();
  const { value, ...mem } = await sampled(() => pageThrough(registry, "/v2/_catalog", "repositories"));
  if (value.count < n) throw new Error(`_catalog returned ${value.count}, fewer than the ${n} seeded`);
  record(driver, "catalog", n, value.times, performance.now() - t0, mem);
}

async function measureGc(driver: string, storage: StorageDriver, n: number): Promise<void> {
  await inParallel(Array.from({ length: n }, (_, i) => i), async () => {
    const bytes = randomBytes(64);
    const digest = parseDigest(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
    await storage.write(blobData(digest), bytes);
  });
  const t0 = performance.now();
  const { value, ...mem } = await sampled(() => collectGarbage(storage, { dryRun: true, gracePeriodSeconds: 0 }));
  if (value.blobs.removed.length < n) throw new Error(`GC found ${value.blobs.removed.length} unreferenced blobs, fewer than ${n}`);
  record(driver, "gc", n, [], performance.now() - t0, mem);
}

async function measureReferrers(driver: string, storage: StorageDriver, n: number): Promise<void> {
  const registry = createRegistry({ storage, uploadSecret: "growth-bench-secret-0123456789abcdef" });
  const name = "growth/referrers";
  const put = async (path: string, body: Uint8Array, type?: string): Promise<void> => {
    const res = await registry(new Request(`http://growth.bench${path}`, { method: path.includes("/manifests/") ? "PUT" : "POST", body: body as BodyInit, headers: type ? { "content-type": type } : {} }));
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  const sha = (b: Uint8Array): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  const empty = new TextEncoder().encode("{}");
  await put(`/v2/${name}/blobs/uploads/?digest=${sha(empty)}`, empty);
  const manifestType = "application/vnd.oci.image.manifest.v1+json";
  const emptyDesc = { mediaType: "application/vnd.oci.empty.v1+json", digest: sha(empty), size: 2 };
  const subject = new TextEncoder().encode(JSON.stringify({ schemaVersion: 2, mediaType: manifestType, config: emptyDesc, layers: [] }));
  await put(`/v2/${name}/manifests/subject`, subject, manifestType);
  await inParallel(Array.from({ length: n }, (_, i) => i), async (i) => {
    const doc = new TextEncoder().encode(JSON.stringify({
      schemaVersion: 2, mediaType: manifestType, artifactType: "application/vnd.example.signature", config: emptyDesc, layers: [emptyDesc],
      subject: { mediaType: manifestType, digest: sha(subject), size: subject.byteLength }, annotations: { n: String(i) },
    }));
    await put(`/v2/${name}/manifests/${sha(doc)}`, doc, manifestType);
  });
  const t0 = performance.now();
  const { value, ...mem } = await sampled(async () => {
    const times: number[] = [];
    let count = 0;
    let next: string | undefined = `/v2/${name}/referrers/${sha(subject)}`;
    while (next) {
      const p0 = performance.now();
      const res = await registry(new Request(`http://growth.bench${next}`));
      const body = (await res.json()) as { manifests?: unknown[] };
      times.push(performance.now() - p0);
      count += body.manifests?.length ?? 0;
      next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
    }
    return { times, count };
  });
  if (value.count !== n) throw new Error(`referrers returned ${value.count} of ${n}`);
  record(driver, "referrers", n, value.times, performance.now() - t0, mem);
}

async function runDriver(driver: string, open: (label: string) => StorageDriver): Promise<void> {
  console.log(`== ${driver}`);
  for (const n of SIZES) {
    for (const [kind, measure] of [["tags", measureTags], ["catalog", measureCatalog], ["gc", measureGc]] as const) {
      const storage = open(`${kind}-${n}`);
      try {
        await measure(driver, storage, n);
      } finally {
        await storage.close?.();
      }
    }
  }
  const storage = open("referrers");
  try {
    await measureReferrers(driver, storage, REFERRERS);
  } finally {
    await storage.close?.();
  }
}

console.log(`registry-kit growth bench — ${new Date().toISOString()}; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}; sizes ${SIZES.join(", ")}; referrers ${REFERRERS}`);
const work = mkdtempSync(join(tmpdir(), "rk-growth-"));
let rgw: RgwServer | undefined;
try {
  if (DRIVERS.includes("fs")) await runDriver("fs", (label) => fsStorage({ root: join(work, label), fsync: false }));
  if (DRIVERS.includes("s3")) {
    rgw = await startRadosgw();
    await rgw.createBucket("growth");
    const server = rgw;
    await runDriver("s3", (label) => s3Storage({
      endpoint: server.endpoint, bucket: "growth", region: server.region, rootDirectory: label, forcePathStyle: true,
      accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey,
    }));
  }
} finally {
  await rgw?.stop();
  rmSync(work, { recursive: true, force: true });
}
const loadEnd = loadavg();
// Keep the results of drivers this run did not measure (e.g. `--drivers fs` after a full run).
const resultsFile = join(HERE, "results", "growth.json");
let kept: Measure[] = [];
try {
  kept = (JSON.parse(readFileSync(resultsFile, "utf8")) as { results: Measure[] }).results.filter((r) => !DRIVERS.includes(r.driver));
} catch {
  kept = [];
}
results.unshift(...kept);
writeFileSync(resultsFile, `${JSON.stringify({ date: new Date().toISOString(), load: loadEnd, sizes: SIZES, referrers: REFERRERS, results }, null, 2)}\n`);
if (WRITE) writeDocs();

/** The growth section of docs/performance.md: one table per case. */
function writeDocs(): void {
  const doc = join(ROOT, "docs", "performance.md");
  const begin = "<!-- growth:begin -->";
  const end = "<!-- growth:end -->";
  const lines = [begin, "", `Measured ${new Date().toISOString().slice(0, 10)} by \`bench/growth.ts\` (load at the end ${loadEnd.map((x) => x.toFixed(2)).join(" ")}), in process, ${PAGE} entries a page.`, ""];
  for (const kind of ["tags", "catalog", "gc", "referrers"] as const) {
    const rows = results.filter((r) => r.kind === kind);
    if (!rows.length) continue;
    lines.push(`**${kind === "gc" ? "GC (dry run) over N blobs" : kind === "tags" ? "tags/list paged through N tags" : kind === "catalog" ? "_catalog paged through N repositories" : "referrers of one manifest"}**`, "");
    lines.push("| driver | N | total ms | pages | first page ms | median page ms | last page ms | RSS peak growth MiB | heap peak growth MiB | heap retained MiB |", "|---|---|---|---|---|---|---|---|---|---|");
    for (const r of rows) lines.push(`| ${r.driver} | ${r.n} | ${r.totalMs} | ${r.pages || "—"} | ${r.pages ? r.firstPageMs : "—"} | ${r.pages ? r.medianPageMs : "—"} | ${r.pages ? r.lastPageMs : "—"} | ${r.rssGrowthMiB} | ${r.heapGrowthMiB} | ${r.heapRetainedMiB} |`);
    lines.push("");
  }
  lines.push(end);
  const text = readFileSync(doc, "utf8");
  const at = text.indexOf(begin);
  const updated = at >= 0 ? text.slice(0, at) + lines.join("\n") + text.slice(text.indexOf(end) + end.length) : `${text.trimEnd()}\n\n## Cost growth (issue 22)\n\n${lines.join("\n")}\n`;
  writeFileSync(doc, updated);
}
