/** Start-up time and RSS at rest (bench/run.ts). */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { cpuOf, freePort, rssOf, runCmd, sleep } from "../proc.js";
import { LIB, MiB, NODE_FLAGS, ROOT, log, median, metrics, round, work } from "./context.js";

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
export async function measureStartup(): Promise<void> {
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
export function packageOf(lib: string, dir: string): string {
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(join(ROOT, "bin", "registry-kit.mjs"), join(dir, "bin", "registry-kit.mjs"));
  copyFileSync(join(ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(lib, join(dir, "dist"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return join(dir, "bin", "registry-kit.mjs");
}
