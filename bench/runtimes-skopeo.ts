/**
 * skopeo push and pull timings against the same server on each runtime:
 * test/runtime/server.ts (registry + token service on one port, memory
 * storage, token auth) under Node (the one running this script, with tsx),
 * Node 22 and 24, Bun and Deno, the binaries scripts/runtimes.mjs fetches.
 *
 *   npx tsx bench/runtimes-skopeo.ts [runs=3] [bigLayerMiB=32]
 *
 * Two images: a small one (a 4 KiB and a 300 KB layer) and a big one (one
 * layer of `bigLayerMiB` random bytes, gzip level 1). Each run pushes each
 * image to a fresh repository as alice (a token per skopeo call) and pulls it
 * back into a fresh OCI layout; the runtimes take turns within each run, so
 * load changes fall on all of them alike. Prints the median and the range
 * (min–max) per runtime, and the load average before and after.
 *
 * Not a timed test; figures go to docs/performance.md.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { buildTestImage, type TestImage } from "../test/interop/helpers/image.js";
import { tempDir } from "../test/interop/helpers/process.js";
import { skopeoSandbox } from "../test/interop/helpers/skopeo.js";

const ROOT = resolve(import.meta.dirname, "..");
const SERVER = join(ROOT, "test/runtime/server.ts");
const runs = Number(process.argv[2] ?? 3);
const bigMiB = Number(process.argv[3] ?? 32);
const alice = { username: "alice", password: "alice-Secret-1" };

const paths = JSON.parse(
  spawnSync(process.execPath, [join(ROOT, "scripts/runtimes.mjs"), "paths"], { cwd: ROOT, encoding: "utf8" }).stdout.trim().split("\n").at(-1)!,
) as Record<string, string[]>;
const RUNTIMES: [string, string[]][] = [
  [`node@${process.versions.node.split(".")[0]}`, [process.execPath, "--import", "tsx"]],
  ["node@22", [...paths["node@22"]!, "--import", "tsx"]],
  ["node@24", [...paths["node@24"]!, "--import", "tsx"]],
  ["bun", paths.bun!],
  ["deno", [...paths.deno!, "--sloppy-imports"]],
];

function start(command: string[]): Promise<{ host: string; child: ChildProcess }> {
  const [bin, ...args] = command as [string, ...string[]];
  const child = spawn(bin, [...args, SERVER], { cwd: ROOT, env: { ...process.env, RK_PASSWORD: alice.password }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolvePromise, reject) => {
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening http:\/\/(127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolvePromise({ host: m[1]!, child });
    });
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) => reject(new Error(`${bin} exited (${code}):\n${out}`)));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `${median(xs)} (${Math.min(...xs)}–${Math.max(...xs)})`;

const work = tempDir("bench-runtimes");
const skopeo = skopeoSandbox();
const servers: { child: ChildProcess }[] = [];
try {
  const images: [string, TestImage][] = [
    ["small", buildTestImage(join(work.path, "small"), { sizes: [4096, 300_000] })],
    ["big", buildTestImage(join(work.path, "big"), { sizes: [bigMiB << 20] })],
  ];
  const hosts = new Map<string, string>();
  for (const [id, command] of RUNTIMES) {
    const server = await start(command);
    servers.push(server);
    hosts.set(id, server.host);
  }
  const before = loadavg();
  const times = new Map<string, number[]>();
  const note = (key: string, ms: number) => times.set(key, [...(times.get(key) ?? []), Math.round(ms)]);
  for (let run = 0; run < runs; run++) {
    for (const [id] of RUNTIMES) {
      for (const [label, img] of images) {
        const dest = `docker://${hosts.get(id)}/alice/${label}-${run}:v1`;
        let t = performance.now();
        const push = await skopeo.copy(img.ref, dest, { destCreds: alice });
        if (push.code !== 0) throw new Error(`${id} push: ${push.stderr}`);
        note(`${id} ${label} push`, performance.now() - t);
        t = performance.now();
        const pull = await skopeo.copy(dest, `oci:${join(work.path, `${id}-${label}-${run}`)}:v1`, { srcCreds: alice });
        if (pull.code !== 0) throw new Error(`${id} pull: ${pull.stderr}`);
        note(`${id} ${label} pull`, performance.now() - t);
      }
    }
  }
  const after = loadavg();
  const version = (command: string[]) =>
    spawnSync(command[0]!, ["--version"], { encoding: "utf8" }).stdout.split("\n")[0]!.replace(/^deno (\S+).*/, "$1").replace(/^v/, "").trim();
  console.log(`\n${runs} runs; small: 4 KiB + 300 KB layers; big: one ${bigMiB} MiB layer. ms, median (min–max).`);
  console.log(`load average before ${before.map((l) => l.toFixed(1)).join(" ")}, after ${after.map((l) => l.toFixed(1)).join(" ")}\n`);
  console.log("| runtime | version | small push | small pull | big push | big pull |");
  console.log("|---|---|---|---|---|---|");
  for (const [id, command] of RUNTIMES) {
    const t = (k: string) => fmt(times.get(`${id} ${k}`)!);
    console.log(`| ${id} | ${version(command)} | ${t("small push")} | ${t("small pull")} | ${t("big push")} | ${t("big pull")} |`);
  }
} finally {
  for (const s of servers) s.child.kill("SIGTERM");
  skopeo.remove();
  work.remove();
}
