/**
 * CPU per manifest GET with and without a webhook sink, measured in-process
 * (no HTTP server, no wrk): the registry's fetch handler is called with the
 * Node adapter's light request, 50 at a time, and the process's CPU
 * (`process.cpuUsage`, every thread: fs writes and fsync included) is divided
 * by the requests. With a sink, the measurement ends only once the sink (a
 * child process, so its CPU is not counted) has received every event, so
 * the delivery of each event is in the figure. The load of the machine
 * changes wall time far more than CPU time: this isolates what the event
 * pipeline costs from how the cores are shared.
 *
 *   node --import tsx bench/events-cost.ts [--requests 100000] [--reps 5] [--arms none,sink,record]
 *
 * Arms: `none` (no onEvent), `sink` (the outbox and its delivery to a sink),
 * `record` (the outbox without delivery: what the request path pays),
 * `sink-object` (as `sink`, the notifier behind a plain `EventSink`: each
 * event is built as an object and serialized from it, the path a service
 * takes when it also has a function listener).
 */
import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { AWAITED } from "../src/events/hook.js";
import { createNotifier, type Notifier, type RegistryEvent } from "../src/events/index.js";
import { nodeWebhookPost } from "../src/node/index.js";
import { lightRequest } from "../src/node/light-request.js";
import { createRegistry } from "../src/registry/index.js";
import { fsStorage } from "../src/storage/fs/index.js";

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);

if (argv[0] === "--sink-child") {
  const { startSink } = await import("./sink.js");
  const sink = await startSink();
  process.send!({ url: sink.url });
  process.on("message", () => process.send!({ events: sink.events(), malformed: sink.malformed() }));
  process.on("disconnect", () => process.exit(0));
} else {
  await main();
}

async function main(): Promise<void> {
  const REQUESTS = Number(arg("--requests") ?? 100_000);
  const REPS = Number(arg("--reps") ?? 5);
  const ARMS = (arg("--arms") ?? "none,sink,record").split(",");
  const CONCURRENCY = 50;
  const work = mkdtempSync(join(tmpdir(), "rk-events-cost-"));
  const child = fork(new URL(import.meta.url).pathname, ["--sink-child"], { execArgv: ["--import", "tsx"] });
  const replies: Array<(m: { url?: string; events?: number }) => void> = [];
  child.on("message", (m) => replies.shift()?.(m as { url?: string; events?: number }));
  const ask = (): Promise<{ url?: string; events?: number }> => new Promise((resolve) => { replies.push(resolve); child.send("count"); });
  const url = (await new Promise<{ url?: string }>((resolve) => replies.push(resolve))).url!;

  const storage = fsStorage({ root: join(work, "data"), fsync: true });
  const plain = createRegistry({ storage });
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }));
  const digest = (b: Buffer): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  const put = await plain(new Request(`http://127.0.0.1:5000/v2/bench/app/blobs/uploads/?digest=${digest(config)}`, { method: "POST", body: config, headers: { "content-type": "application/octet-stream" } }));
  if (put.status !== 201) throw new Error(`blob upload: ${put.status}`);
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: digest(config), size: config.length }, layers: [],
  }));
  const mput = await plain(new Request("http://127.0.0.1:5000/v2/bench/app/manifests/latest", { method: "PUT", body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
  if (mput.status !== 201) throw new Error(`manifest PUT: ${mput.status}`);

  const signal = new AbortController().signal;
  const get = (): Request => lightRequest({
    method: "GET", url: "http://127.0.0.1:5000/v2/bench/app/manifests/latest", signal: () => signal,
    pairs: [["Host", "127.0.0.1:5000"], ["Accept", "application/vnd.oci.image.manifest.v1+json"], ["User-Agent", "bench"]],
  });

  /** CPU seconds of this process's main thread (the rest is fs threads and the garbage collector's helpers). */
  const mainThread = (): number => {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  let delivered = 0;
  const arm = async (name: string): Promise<{ us: number; wall: number; main: number; sys: number }> => {
    let notifier: Notifier | undefined;
    if (name !== "none") notifier = createNotifier({ storage, prefix: `_events-${name}`, endpoints: [{ name: "bench", url }], post: nodeWebhookPost() });
    const delivers = name === "sink" || name === "sink-object";
    if (delivers) notifier!.start();
    // sink-object: the same notifier behind a plain EventSink, so every event is built as an object first.
    // Marked AWAITED as the notifier is: a plain sink would be fed through a queue after the response (issue 41).
    const hook = name === "sink-object" ? { [AWAITED]: true as const, record: (event: RegistryEvent) => notifier!.record(event) } : notifier;
    const registry = hook ? createRegistry({ storage, onEvent: hook }) : plain;
    const before = (await ask()).events!;
    const cpu0 = process.cpuUsage();
    const main0 = mainThread();
    const t0 = performance.now();
    for (let done = 0; done < REQUESTS; done += CONCURRENCY) {
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        const r = await registry(get());
        if (r.status !== 200) throw new Error(`GET: ${r.status}`);
        await r.arrayBuffer();
      }));
    }
    if (delivers) {
      await notifier!.flush();
      while ((await ask()).events! - before < REQUESTS) await new Promise((r) => setTimeout(r, 5));
      delivered += REQUESTS;
    }
    if (name === "record") await notifier!.flush();
    const cpu = process.cpuUsage(cpu0);
    const main = mainThread() - main0;
    const wall = performance.now() - t0;
    await notifier?.close();
    return { us: (cpu.user + cpu.system) / REQUESTS, wall: (wall * 1000) / REQUESTS, main: (main * 1e6) / REQUESTS, sys: cpu.system / REQUESTS };
  };

  console.log(`events-cost: ${REQUESTS} manifest GETs per arm, ${REPS} repetitions; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  const results = new Map<string, number[]>();
  const split = new Map<string, { main: number[]; sys: number[] }>();
  await arm("none"); // warm-up
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 === 0 ? ARMS : [...ARMS].reverse();
    for (const name of order) {
      const r = await arm(name);
      results.set(name, [...(results.get(name) ?? []), r.us]);
      const s = split.get(name) ?? { main: [], sys: [] };
      s.main.push(r.main);
      s.sys.push(r.sys);
      split.set(name, s);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const base = median(results.get("none") ?? [NaN]);
  for (const [name, xs] of results) {
    console.log(`${name.padEnd(8)} ${median(xs).toFixed(2)} µs CPU/request (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})  +${(median(xs) - base).toFixed(2)} µs, ${(median(xs) / base).toFixed(2)}×; main thread ${median(split.get(name)!.main).toFixed(2)}, system ${median(split.get(name)!.sys).toFixed(2)}`);
  }
  console.log(`sink received ${delivered} events as expected; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  child.disconnect();
  rmSync(work, { recursive: true, force: true });
}
