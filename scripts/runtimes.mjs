#!/usr/bin/env node
/**
 * The runtime matrix: the core's hermetic unit suites (registry, auth, users,
 * memory storage, client) under Node 22, Node 24, Bun and Deno, each running
 * vitest itself, and inside workerd through @cloudflare/vitest-plugin
 * (test/workerd/vitest.config.ts, with the R2 driver's contract suite on
 * miniflare's local R2). Node 20 runs them in the plain `vitest run` of
 * `npm test`, whose json report (.runtimes/main.json) gives its line the same counts.
 *
 *   node scripts/runtimes.mjs          fetch the runtimes if missing, run, one line each
 *   node scripts/runtimes.mjs deno workerd   the same, for these runtimes only
 *   node scripts/runtimes.mjs fetch    only fetch them
 *   node scripts/runtimes.mjs paths    fetch, then print {id: [binary, ...args]} as JSON
 *
 * The binaries come from the npm registry (the per-platform packages behind
 * `node`, `bun` and `deno`, which carry the binary without an install
 * script) into `.runtimes/`, pinned below, with miniflare (workerd) for
 * test/interop/runtimes-skopeo.test.ts and @cloudflare/vitest-plugin for the
 * workerd line. Exit status 1 when any runtime fails a test or cannot run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const DIR = join(ROOT, ".runtimes");
const VERSIONS = {
  node22: "22.23.3",
  node24: "24.21.0",
  bun: "1.4.5",
  deno: "2.9.6",
  miniflare: "4.20260730.0",
  vitestPlugin: "1.5.0",
};

/** The core's hermetic suites, and why a file is left out on one runtime. */
const SUITES = ["test/runtime", "test/registry", "test/auth", "test/users", "test/storage/memory.test.ts", "test/client", "test/ui/ui-core.test.ts",
  // Bun ends the process when a FileHandle is left to its collector: the fs driver must close dropped streams itself.
  "test/storage/fs-dropped-stream.test.ts",
  // Freeing body chunks: ArrayBuffer#transfer where the runtime has it (Node 22+, Bun, Deno), a closed MessagePort on Node 20.
  "test/util/owned-chunks.test.ts"];
const EXCLUDE_ALL = [
  // Its bound is on the process's RSS, shared with the other files of the worker: under the other runtimes' GC it
  // failed 2 runs in 6 (growth 16+ MiB); flat memory is checked by the Node 20 run.
  "test/registry/large-stream.test.ts",
];
const EXCLUDE = {
  // node-sign checks signJwt's node:crypto fast path by spying on Node's own node:crypto (KeyObject.from, sign):
  // workerd's node:crypto is a partial one whose module namespace cannot be spied on, and signJwt takes
  // its WebCrypto path there, which the token-service, jwks and keys suites check inside workerd.
  // password: its wall-clock bound on one scrypt hash (< 5 s) does not hold for code run through vitest's module
  // runner inside workerd on a loaded machine (measured 4-18 s; a bundled Worker answers a password token
  // request in 0.3-0.4 s): hashing and checking passwords runs inside workerd in the users suites.
  // fs-dropped-stream: the fs driver is the Node-only layer, and it counts open files in /proc/self/fd, which
  // workerd's in-memory node:fs does not have.
  // owned-chunks: it measures freed memory through process.memoryUsage() and makes Node's kind of buffers; the
  // release is used by the Node adapter only.
  // reset-tokens: it also checks what docs/policies.md says, read from the checkout, which workerd's in-memory
  // node:fs does not hold; the reset itself runs on every other runtime.
  workerd: ["test/auth/node-sign.test.ts", "test/users/password.test.ts", "test/storage/fs-dropped-stream.test.ts", "test/util/owned-chunks.test.ts", "test/users/reset-tokens.test.ts"],
};
/** Suites that run only inside workerd: the R2 driver on miniflare's local R2. */
const ONLY = { workerd: ["test/workerd"] };

const os = process.platform;
const cpu = process.arch;
const bunCpu = cpu === "arm64" ? "aarch64" : cpu;
const denoCpu = cpu === "arm64" ? "arm64" : "x64";
const PACKAGES = {
  node22: `node22@npm:node-${os}-${cpu}@${VERSIONS.node22}`,
  node24: `node24@npm:node-${os}-${cpu}@${VERSIONS.node24}`,
  bun: `@oven/bun-${os === "darwin" ? "darwin" : "linux"}-${bunCpu}@${VERSIONS.bun}`,
  deno: `@deno/${os === "darwin" ? "darwin" : "linux"}-${denoCpu}${os === "linux" ? "-glibc" : ""}@${VERSIONS.deno}`,
  // workerd through miniflare (needs Node 22+: run by the node24 binary above).
  miniflare: `miniflare@${VERSIONS.miniflare}`,
  // vitest inside workerd (wrangler, miniflare, workerd; Node 22+). Its peer vitest is the project's own.
  vitestPlugin: `@cloudflare/vitest-plugin@${VERSIONS.vitestPlugin}`,
};
const PLUGIN_DIR = join(DIR, "node_modules/@cloudflare/vitest-plugin");

const modules = join(DIR, "node_modules");
const RUNTIMES = [
  { id: "node@22", bin: join(modules, "node22/bin/node"), args: [] },
  { id: "node@24", bin: join(modules, "node24/bin/node"), args: [] },
  { id: "bun", bin: join(modules, `@oven/bun-${os === "darwin" ? "darwin" : "linux"}-${bunCpu}/bin/bun`), args: ["--bun"] },
  { id: "deno", bin: join(modules, `@deno/${os === "darwin" ? "darwin" : "linux"}-${denoCpu}${os === "linux" ? "-glibc" : ""}/deno`), args: ["run", "-A"] },
  // vitest run by Node 24 with the workers pool: the test files run inside workerd.
  { id: "workerd", bin: join(modules, "node24/bin/node"), args: [], config: "test/workerd/vitest.config.ts" },
];

function fetchRuntimes() {
  const version = (dir) => existsSync(join(dir, "package.json")) && JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
  const current = version(join(modules, "miniflare")) === VERSIONS.miniflare && version(PLUGIN_DIR) === VERSIONS.vitestPlugin;
  if (RUNTIMES.every((r) => existsSync(r.bin)) && current) return;
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, "package.json"), JSON.stringify({ private: true, description: "runtimes for scripts/runtimes.mjs" }) + "\n");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  // --legacy-peer-deps: the plugin's peer vitest must be the project's (found up the tree), not a second copy.
  const flags = ["--no-save", "--no-package-lock", "--ignore-scripts", "--no-audit", "--no-fund", "--legacy-peer-deps"];
  const r = spawnSync(npm, ["install", "--prefix", DIR, ...flags, ...Object.values(PACKAGES)], {
    stdio: "inherit",
  });
  if (r.status !== 0) throw new Error("npm install of the runtimes failed");
  for (const rt of RUNTIMES) if (!existsSync(rt.bin)) throw new Error(`${rt.id}: no binary at ${rt.bin} after install`);
}

/** The test files of a suite path (a file, or the *.test.ts under a directory), relative to the root. */
function testFiles(path) {
  if (!statSync(join(ROOT, path)).isDirectory()) return [path];
  return readdirSync(join(ROOT, path), { recursive: true })
    .map((f) => `${path}/${String(f).replaceAll("\\", "/")}`)
    .filter((f) => f.endsWith(".test.ts"))
    .sort();
}

function version(rt) {
  if (rt.id === "workerd") {
    const require = createRequire(join(PLUGIN_DIR, "package.json"));
    return require(require.resolve("workerd/package.json", { paths: [require.resolve("miniflare")] })).version;
  }
  const out = spawnSync(rt.bin, ["--version"], { encoding: "utf8" }).stdout ?? "";
  return out.split("\n")[0].replace(/^deno /, "").replace(/ \(.*$/, "").replace(/^v/, "").trim();
}

function runOne(rt) {
  const report = join(DIR, `${rt.id.replace("@", "")}.json`);
  rmSync(report, { force: true });
  const skip = new Set([...EXCLUDE_ALL, ...(EXCLUDE[rt.id] ?? [])]);
  const files = [...SUITES, ...(ONLY[rt.id] ?? [])].flatMap(testFiles).filter((f) => !skip.has(f));
  const project = rt.config ? ["--config", rt.config] : ["--project", "unit"];
  const started = Date.now();
  const r = spawnSync(
    rt.bin,
    [...rt.args, join(ROOT, "node_modules/vitest/vitest.mjs"), "run", ...project, "--reporter=dot", "--reporter=json", `--outputFile.json=${report}`, ...files],
    { cwd: ROOT, env: { ...process.env, RK_EXPECT_RUNTIME: rt.id }, encoding: "utf8", maxBuffer: 64 << 20 },
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  let counts = "no report";
  let ok = r.status === 0;
  if (existsSync(report)) {
    const j = JSON.parse(readFileSync(report, "utf8"));
    counts = `${j.numTotalTestSuites !== undefined ? j.testResults.length : "?"} files, ${j.numPassedTests} passed, ${j.numFailedTests} failed, ${j.numPendingTests + j.numTodoTests} skipped`;
    ok &&= j.numFailedTests === 0 && j.numPassedTests > 0 && j.success;
  }
  console.log(`runtime ${rt.id.padEnd(8)} ${version(rt).padEnd(8)} ${ok ? "ok  " : "FAIL"} ${counts} (${seconds} s)`);
  if (!ok) process.stdout.write(`${r.stdout ?? ""}\n${r.stderr ?? ""}\n`);
  return ok;
}

/** The main `vitest run` of `npm test` (the Node running this script), kept by its json reporter (see package.json). */
const MAIN_REPORT = join(DIR, "main.json");

/** The line of the Node that ran the main vitest run: the same suites' counts, read from its report (no second run). */
function mainLine() {
  const id = `node@${process.versions.node.split(".")[0]}`;
  const head = `runtime ${id.padEnd(8)} ${process.versions.node.padEnd(8)}`;
  if (!existsSync(MAIN_REPORT)) {
    console.log(`${head} ---- no report of the main vitest run (npm test writes ${MAIN_REPORT})`);
    return true;
  }
  const j = JSON.parse(readFileSync(MAIN_REPORT, "utf8"));
  const files = SUITES.flatMap(testFiles);
  const results = j.testResults.filter((t) => files.includes(relative(ROOT, t.name).replaceAll("\\", "/")));
  const statuses = results.flatMap((t) => t.assertionResults.map((a) => a.status));
  const passed = statuses.filter((s) => s === "passed").length;
  const failed = statuses.filter((s) => s === "failed").length;
  // Not every file need be there: `vitest run --project unit` (npm run test:unit) leaves out the suites' system files.
  const ok = failed === 0 && passed > 0;
  const minutes = Math.round((Date.now() - j.startTime) / 60_000);
  console.log(
    `${head} ${ok ? "ok  " : "FAIL"} ${results.length} files, ${passed} passed, ${failed} failed, ${statuses.length - passed - failed} skipped ` +
      `(the main vitest run, ${minutes} min ago${results.length === files.length ? "" : `; ${files.length - results.length} of the suites' files not in it`})`,
  );
  return ok;
}

fetchRuntimes();
if (process.argv[2] === "paths") {
  // workerd has no binary to run a script with: it runs under miniflare (test/runtime/miniflare.mjs).
  console.log(JSON.stringify(Object.fromEntries(RUNTIMES.filter((rt) => !rt.config).map((rt) => [rt.id, [rt.bin, ...rt.args]]))));
} else if (process.argv[2] !== "fetch") {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((id) => !RUNTIMES.some((rt) => rt.id === id));
  if (unknown.length > 0) throw new Error(`unknown runtime ${unknown.join(", ")}; known: ${RUNTIMES.map((rt) => rt.id).join(", ")}`);
  const results = asked.length === 0 ? [mainLine(), ...RUNTIMES.map(runOne)] : RUNTIMES.filter((rt) => asked.includes(rt.id)).map(runOne);
  process.exit(results.every(Boolean) ? 0 : 1);
}
