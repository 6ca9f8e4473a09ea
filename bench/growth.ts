/**
 * Cost growth (issue 22): does the cost of one page stay flat while the total
 * grows, is the total linear, and does memory stay flat?
 *
 *   node --expose-gc --import tsx bench/growth.ts [--drivers fs,s3,memory] [--sizes 1000,10000,100000]
 *     [--cases tags,catalog,gc,gc-stat,referrers] [--runs 3] [--runs-at-100000 1] [--gc-stat-sizes 1000,10000,100000]
 *     [--referrers 1000] [--seed-concurrency 48] [--keep-seed] [--no-write]
 *
 * For each storage driver (fs in a temp dir; S3 on radosgw; memory when asked)
 * and each size N:
 * N tags paged through `tags/list?n=1000`, N repositories paged through
 * `_catalog?n=1000`, a GC (dry run) over N blobs; and once per driver the
 * referrers of one manifest with `--referrers` referrers. On S3 `gc-stat` runs
 * the same GC on a driver that gives no sizes and times with its listing, so
 * the sweep stats every blob (a HEAD each, the way GC worked before), side by
 * side with `gc` (once at 100,000: it takes minutes). The registry handler is called in process (no HTTP), so the
 * figures are the registry's and the driver's cost alone.
 *
 * Seeding writes the layout's keys (tags, catalog markers, blobs) straight to
 * the store: files for fs, signed PUTs to the bucket for S3, `--seed-concurrency`
 * at a time; the referrers are pushed through the registry. Seeding is timed
 * on its own and is not part of the measurement; every case is then measured
 * `--runs` times on the same seeded store (`--runs-at-100000` at N = 100,000).
 * Memory: the process's RSS and V8 heap, sampled every 10 ms during each
 * measurement, against their value before it.
 *
 * S3: with `S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and
 * `AWS_DEFAULT_REGION`) set, the bench uses that server (bucket `growth`,
 * created when missing), e.g. one started by scripts/s3-server/start-rgw.sh;
 * otherwise it starts a throw-away radosgw. `--keep-seed` leaves the seeded
 * objects in the bucket and reuses them on the next run (a marker object per
 * seeded store says it is complete).
 *
 * Writes bench/results/growth.json (results of drivers not measured are kept)
 * and, unless --no-write, the section between the growth markers of
 * docs/performance.md and docs/performance-growth.svg (bench/growth-report.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AwsClient } from "aws4fetch";
import { collectGarbage, createRegistry } from "../src/registry/index.js";
import { blobData, catalogEntry, tagLink } from "../src/registry/stores/base/layout.js";
import type { StorageDriver } from "../src/storage/driver.js";
import { fsStorage } from "../src/storage/fs/index.js";
import { memoryStorage } from "../src/storage/memory/index.js";
import { s3Storage } from "../src/storage/s3/index.js";
import { parseDigest } from "../src/oci/digest.js";
import { startRadosgw, type RgwServer } from "../test/interop/helpers/scale-out.js";
import { writeGrowthDocs, type GrowthResult } from "./growth-report.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const list = (name: string, fallback: string): string[] => (arg(name) ?? fallback).split(",").filter(Boolean);
const DRIVERS = list("--drivers", "fs,s3");
const SIZES = list("--sizes", "1000,10000,100000").map(Number);
const CASES = list("--cases", "tags,catalog,gc,gc-stat,referrers");
const RUNS = Number(arg("--runs") ?? 3);
const RUNS_AT_100K = Number(arg("--runs-at-100000") ?? RUNS);
const GC_STAT_SIZES = list("--gc-stat-sizes", "1000,10000,100000").map(Number);
const REFERRERS = Number(arg("--referrers") ?? 1000);
const SEED_CONCURRENCY = Number(arg("--seed-concurrency") ?? 48);
const KEEP_SEED = argv.includes("--keep-seed");
const WRITE = !argv.includes("--no-write");
const PAGE = 1000;
const BUCKET = "growth";
const MiB = 1024 * 1024;
const SECRET = "growth-bench-secret-0123456789abcdef";
const encoder = new TextEncoder();

type Kind = GrowthResult["kind"];
const results: GrowthResult[] = [];
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Run `task` over `count` indexes, `SEED_CONCURRENCY` at a time. */
async function inParallel(count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, async () => {
    while (next < count) await task(next++);
  }));
}

/** Time `run` and sample RSS and heap while it runs; growth over the value before. */
async function sampled<T>(run: () => Promise<T>): Promise<{ value: T; ms: number; rss: number; heap: number; retained: number }> {
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
    const t0 = performance.now();
    const value = await run();
    const ms = performance.now() - t0; // without the collections around it
    global.gc?.();
    return { value, ms, rss: (rss - rss0) / MiB, heap: (heap - heap0) / MiB, retained: (process.memoryUsage().heapUsed - heap0) / MiB };
  } finally {
    clearInterval(timer);
  }
}

/** Page through `path` (n=PAGE, following Link) and time every page. */
async function pageThrough(registry: (r: Request) => Promise<Response>, path: string, field: "tags" | "repositories" | "manifests"): Promise<{ times: number[]; count: number }> {
  const times: number[] = [];
  let count = 0;
  let next: string | undefined = path.includes("/referrers/") ? path : `${path}?n=${PAGE}`;
  while (next) {
    const t0 = performance.now();
    const res = await registry(new Request(`http://growth.bench${next}`));
    const body = (await res.json()) as Record<string, unknown[] | undefined>;
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${next}: ${res.status} ${JSON.stringify(body)}`);
    count += body[field]?.length ?? 0;
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  }
  return { times, count };
}

function record(driver: string, kind: Kind, n: number, run: number, seedMs: number, times: number[], totalMs: number, mem: { rss: number; heap: number; retained: number }): void {
  const m: GrowthResult = {
    driver, kind, n, run, seedMs: round(seedMs), totalMs: round(totalMs), pages: times.length,
    firstPageMs: round(times[0] ?? totalMs, 2), lastPageMs: round(times.at(-1) ?? totalMs, 2), medianPageMs: round(median(times.length ? times : [totalMs]), 2),
    maxPageMs: round(Math.max(...(times.length ? times : [totalMs])), 2),
    rssGrowthMiB: round(mem.rss), heapGrowthMiB: round(mem.heap), heapRetainedMiB: round(mem.retained), load1: round(loadavg()[0]!, 2),
  };
  results.push(m);
  console.log(`  ${driver} ${kind} n=${n} run ${run}: total ${m.totalMs} ms, ${m.pages} pages (first ${m.firstPageMs}, median ${m.medianPageMs}, max ${m.maxPageMs}, last ${m.lastPageMs} ms), RSS +${m.rssGrowthMiB} MiB, heap peak +${m.heapGrowthMiB} MiB, retained ${m.heapRetainedMiB} MiB, load ${m.load1}`);
}

/** Where a case's objects go, and how to write them fast. */
interface Store {
  driver: string;
  storage: StorageDriver;
  /** Write one object straight to the store (not through the driver's bookkeeping). */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** How long seeding took when a previous run left a complete seed of this store (`--keep-seed`). */
  seeded(): Promise<number | undefined>;
  markSeeded(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Seed (unless already seeded), timed. */
async function seed(store: Store, count: number, write: (i: number) => Promise<unknown>): Promise<number> {
  const earlier = await store.seeded();
  if (earlier !== undefined) return earlier;
  const t0 = performance.now();
  await inParallel(count, write);
  const ms = performance.now() - t0;
  await store.markSeeded(ms);
  console.log(`  ${store.driver} seeded ${count} objects in ${(ms / 1000).toFixed(1)} s (${Math.round(count / (ms / 1000))} objects/s)`);
  return ms;
}

const runsAt = (n: number): number => (n >= 100_000 ? RUNS_AT_100K : RUNS);

async function measureTags(store: Store, n: number): Promise<void> {
  const name = `growth/tags-${n}`;
  const digest = encoder.encode(`sha256:${"0".repeat(64)}`);
  const seedMs = await seed(store, n + 1, (i) => (i === n ? store.put(catalogEntry(name), encoder.encode(name)) : store.put(tagLink(name, `t${String(i).padStart(7, "0")}`), digest)));
  const registry = createRegistry({ storage: store.storage, uploadSecret: SECRET });
  for (let run = 1; run <= runsAt(n); run++) {
    const { value, ms, ...mem } = await sampled(() => pageThrough(registry, `/v2/${name}/tags/list`, "tags"));
    if (value.count !== n) throw new Error(`tags/list returned ${value.count} of ${n} tags`);
    record(store.driver, "tags", n, run, seedMs, value.times, ms, mem);
  }
}

async function measureCatalog(store: Store, n: number): Promise<void> {
  const seedMs = await seed(store, n, (i) => {
    const name = `growth-${n}/r${String(i).padStart(7, "0")}`;
    return store.put(catalogEntry(name), encoder.encode(name));
  });
  const registry = createRegistry({ storage: store.storage, uploadSecret: SECRET });
  for (let run = 1; run <= runsAt(n); run++) {
    const { value, ms, ...mem } = await sampled(() => pageThrough(registry, "/v2/_catalog", "repositories"));
    if (value.count !== n) throw new Error(`_catalog returned ${value.count} of the ${n} seeded`);
    record(store.driver, "catalog", n, run, seedMs, value.times, ms, mem);
  }
}

/** A view of `storage` whose listings carry no sizes and times: GC then stats every blob. */
function withoutListInfo(storage: StorageDriver): StorageDriver {
  return { ...storage, list: (prefix, options) => storage.list(prefix, { ...(options?.after === undefined ? {} : { after: options.after }), ...(options?.limit === undefined ? {} : { limit: options.limit }) }) };
}

async function measureGc(store: Store, n: number, kinds: Array<"gc" | "gc-stat">): Promise<void> {
  const seedMs = await seed(store, n, (i) => {
    const bytes = createHash("sha256").update(`growth blob ${n} ${i}`).digest();
    const digest = parseDigest(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
    return store.put(blobData(digest), bytes);
  });
  for (let run = 1; run <= runsAt(n); run++) {
    for (const kind of kinds) {
      if (kind === "gc-stat" && (!GC_STAT_SIZES.includes(n) || (n >= 100_000 && run > 1))) continue; // a HEAD per blob: once at 100,000
      const storage = kind === "gc" ? store.storage : withoutListInfo(store.storage);
      const { value, ms, ...mem } = await sampled(() => collectGarbage(storage, { dryRun: true, gracePeriodSeconds: 0 }));
      if (value.blobs.removed.length !== n) throw new Error(`GC found ${value.blobs.removed.length} unreferenced blobs, not ${n}`);
      record(store.driver, kind, n, run, seedMs, [], ms, mem);
    }
  }
}

async function measureReferrers(store: Store, n: number): Promise<void> {
  const registry = createRegistry({ storage: store.storage, uploadSecret: SECRET });
  const name = "growth/referrers";
  const put = async (path: string, body: Uint8Array, type?: string): Promise<void> => {
    const res = await registry(new Request(`http://growth.bench${path}`, { method: path.includes("/manifests/") ? "PUT" : "POST", body: body as BodyInit, headers: type ? { "content-type": type } : {} }));
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  const sha = (b: Uint8Array): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  const empty = encoder.encode("{}");
  const manifestType = "application/vnd.oci.image.manifest.v1+json";
  const emptyDesc = { mediaType: "application/vnd.oci.empty.v1+json", digest: sha(empty), size: 2 };
  const subject = encoder.encode(JSON.stringify({ schemaVersion: 2, mediaType: manifestType, config: emptyDesc, layers: [] }));
  await put(`/v2/${name}/blobs/uploads/?digest=${sha(empty)}`, empty);
  await put(`/v2/${name}/manifests/subject`, subject, manifestType);
  const seedMs = await seed(store, n, async (i) => {
    const doc = encoder.encode(JSON.stringify({
      schemaVersion: 2, mediaType: manifestType, artifactType: "application/vnd.example.signature", config: emptyDesc, layers: [emptyDesc],
      subject: { mediaType: manifestType, digest: sha(subject), size: subject.byteLength }, annotations: { n: String(i) },
    }));
    await put(`/v2/${name}/manifests/${sha(doc)}`, doc, manifestType);
  });
  for (let run = 1; run <= RUNS; run++) {
    const { value, ms, ...mem } = await sampled(() => pageThrough(registry, `/v2/${name}/referrers/${sha(subject)}`, "manifests"));
    if (value.count !== n) throw new Error(`referrers returned ${value.count} of ${n}`);
    record(store.driver, "referrers", n, run, seedMs, value.times, ms, mem);
  }
}

async function runDriver(open: (label: string) => Store): Promise<void> {
  for (const n of SIZES) {
    const cases: Array<[string, (store: Store) => Promise<void>]> = [];
    if (CASES.includes("tags")) cases.push(["tags", (s) => measureTags(s, n)]);
    if (CASES.includes("catalog")) cases.push(["catalog", (s) => measureCatalog(s, n)]);
    const gcKinds = (["gc", "gc-stat"] as const).filter((k) => CASES.includes(k));
    if (gcKinds.length > 0) cases.push(["gc", (s) => measureGc(s, n, s.driver === "s3" ? gcKinds : gcKinds.filter((k) => k === "gc"))]);
    for (const [label, measure] of cases) {
      const store = open(`${label}-${n}`);
      try {
        await measure(store);
      } finally {
        await store.close();
      }
    }
  }
  if (!CASES.includes("referrers")) return;
  const store = open(`referrers-${REFERRERS}`);
  try {
    await measureReferrers(store, REFERRERS);
  } finally {
    await store.close();
  }
}

function memoryStore(): Store {
  const storage = memoryStorage();
  return {
    driver: "memory",
    storage,
    put: async (key, bytes) => void (await storage.write(key, bytes)),
    seeded: async () => undefined,
    markSeeded: async () => undefined,
    close: async () => undefined,
  };
}

function fsStore(work: string, label: string): Store {
  const root = join(work, label);
  return {
    driver: "fs",
    storage: fsStorage({ root, fsync: false }),
    async put(key, bytes) {
      const file = join(root, key);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, bytes);
    },
    seeded: async () => undefined,
    markSeeded: async () => undefined,
    close: async () => undefined,
  };
}

interface S3Server { endpoint: string; accessKeyId: string; secretAccessKey: string; region: string }

function s3Store(server: S3Server, label: string): Store {
  const aws = new AwsClient({ accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey, service: "s3", region: server.region });
  const url = (key: string) => `${server.endpoint}/${BUCKET}/${label}/${key}`;
  const send = async (method: string, key: string, body?: Uint8Array): Promise<Response> => {
    const res = await aws.fetch(url(key), { method, ...(body ? { body: body as BodyInit, headers: { "content-length": String(body.byteLength) } } : {}) });
    await res.arrayBuffer();
    if (!res.ok && !(method === "HEAD" && res.status === 404)) throw new Error(`${method} ${url(key)}: ${res.status}`);
    return res;
  };
  const storage = s3Storage({
    endpoint: server.endpoint, bucket: BUCKET, region: server.region, rootDirectory: label, forcePathStyle: true,
    accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey,
  });
  return {
    driver: "s3",
    storage,
    put: async (key, bytes) => void (await send("PUT", key, bytes)),
    async seeded() {
      if (!KEEP_SEED) return undefined;
      const res = await aws.fetch(url("~seeded"));
      const text = await res.text();
      return res.ok ? Number(text) || 0 : undefined;
    },
    markSeeded: async (ms) => void (await send("PUT", "~seeded", encoder.encode(String(Math.round(ms))))),
    async close() {
      if (!KEEP_SEED) {
        await send("DELETE", "~seeded").catch(() => undefined);
        await storage.deletePrefix("blobs");
        await storage.deletePrefix("repositories");
        await storage.deletePrefix("catalog");
      }
      await storage.close?.();
    },
  };
}

console.log(`registry-kit growth bench — ${new Date().toISOString()}; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}; drivers ${DRIVERS.join(", ")}; sizes ${SIZES.join(", ")}; cases ${CASES.join(", ")}; runs ${RUNS} (${RUNS_AT_100K} at 100,000)`);
const loadStart = loadavg();
const work = mkdtempSync(join(tmpdir(), "rk-growth-"));
let rgw: RgwServer | undefined;
try {
  if (DRIVERS.includes("memory")) {
    console.log("== memory");
    await runDriver(() => memoryStore());
  }
  if (DRIVERS.includes("fs")) {
    console.log("== fs");
    await runDriver((label) => fsStore(work, label));
  }
  if (DRIVERS.includes("s3")) {
    console.log("== s3");
    const env = process.env;
    let server: S3Server;
    if (env.S3_ENDPOINT && env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
      server = { endpoint: env.S3_ENDPOINT, accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, region: env.AWS_DEFAULT_REGION ?? "us-east-1" };
    } else {
      rgw = await startRadosgw({ osdBytes: 8 * 1024 * MiB });
      server = rgw;
    }
    const aws = new AwsClient({ accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey, service: "s3", region: server.region });
    const made = await aws.fetch(`${server.endpoint}/${BUCKET}`, { method: "PUT" });
    const text = await made.text();
    if (!made.ok && !text.includes("BucketAlreadyOwnedByYou")) throw new Error(`creating bucket ${BUCKET}: ${made.status} ${text}`);
    await runDriver((label) => s3Store(server, label));
  }
} finally {
  await rgw?.stop();
  rmSync(work, { recursive: true, force: true });
}
const loadEnd = loadavg();
// Keep the results of drivers, cases and sizes this run did not measure (e.g. `--drivers fs` after a full run).
const resultsFile = join(HERE, "results", "growth.json");
let kept: GrowthResult[] = [];
try {
  kept = (JSON.parse(readFileSync(resultsFile, "utf8")) as { results: GrowthResult[] }).results.filter((r) => r.run !== undefined && !(DRIVERS.includes(r.driver) && CASES.includes(r.kind) && (r.kind === "referrers" || SIZES.includes(r.n))));
} catch {
  kept = [];
}
results.unshift(...kept);
writeFileSync(resultsFile, `${JSON.stringify({ date: new Date().toISOString(), loadStart, loadEnd, sizes: SIZES, referrers: REFERRERS, runs: RUNS, results }, null, 2)}\n`);
if (WRITE) {
  writeGrowthDocs(join(ROOT, "docs"), results, PAGE);
  console.log("wrote docs/performance.md (growth section) and docs/performance-growth.svg");
}

