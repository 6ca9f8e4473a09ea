/**
 * Process plumbing for the benchmark: tool checks (naming the Debian package,
 * never installing), child servers that die with the bench (also on Ctrl-C
 * and failures), RSS/CPU sampling from /proc, and running wrk/curl/dd.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, closeSync, constants, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";

/** Debian packages of the programs the bench drives. */
export const PACKAGES: Record<string, string> = { "docker-registry": "docker-registry", wrk: "wrk", curl: "curl", dd: "coreutils", sync: "coreutils" };

export function findTool(name: string): string | undefined {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const extra of ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]) if (!dirs.includes(extra)) dirs.push(extra);
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // next
    }
  }
  return undefined;
}

/** Resolve every tool or exit 2 saying which Debian packages to install. Installs nothing. */
export function requireTools(names: readonly string[]): Record<string, string> {
  const found: Record<string, string> = {};
  const missing: string[] = [];
  for (const n of names) {
    const p = findTool(n);
    if (p) found[n] = p;
    else missing.push(n);
  }
  if (missing.length > 0) {
    const pkgs = [...new Set(missing.map((n) => PACKAGES[n] ?? n))];
    console.error(`bench: missing program(s): ${missing.join(", ")}.`);
    console.error(`The benchmark needs the Debian packages docker-registry (CNCF Distribution 2.8, the reference) and wrk.`);
    console.error(`Install them with:\n\n  sudo apt-get install -y ${pkgs.join(" ")}\n`);
    console.error(`Nothing was installed; the benchmark did not run.`);
    process.exit(2);
  }
  return found;
}

const children = new Set<ChildProcess>();
const cleanups: Array<() => void> = [];

function killNow(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    child.kill(signal);
  } catch {
    // gone
  }
}

let hooked = false;
/** Kill every child and run cleanups on exit, Ctrl-C, SIGTERM and uncaught errors. */
export function installExitHooks(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const c of children) killNow(c, "SIGKILL");
    for (const f of cleanups.splice(0).reverse()) {
      try {
        f();
      } catch {
        // best effort
      }
    }
  });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(sig, () => {
      console.error(`\nbench: ${sig}, stopping the servers`);
      process.exit(130);
    });
  }
}

/** Run `f` at exit (after the children are killed). */
export function atExit(f: () => void): void {
  cleanups.push(f);
}

export interface Server {
  name: string;
  pid: number;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start a long-running server; resolves once `ready(url)` says so. The child
 * is killed when the bench exits, however it exits.
 */
export async function startServer(
  name: string,
  cmd: string,
  args: readonly string[],
  url: string,
  ready: (url: string) => Promise<boolean>,
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; logFile?: string } = {},
): Promise<Server> {
  const child = spawn(cmd, [...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
  children.add(child);
  const chunks: Buffer[] = [];
  let size = 0;
  // the whole output, for runs that trace the servers (--server-logs); memory keeps the last 1 MB
  const logFd = opts.logFile === undefined ? undefined : openSync(opts.logFile, "a");
  if (logFd !== undefined) child.on("close", () => closeSync(logFd));
  const keep = (b: Buffer): void => {
    if (logFd !== undefined) writeSync(logFd, b);
    chunks.push(b);
    size += b.length;
    while (size > 1_000_000 && chunks.length > 1) size -= chunks.shift()!.length;
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  child.stdin!.on("error", () => {});
  const closed = new Promise<void>((resolve) => child.on("close", () => (children.delete(child), resolve())));
  const output = (): string => Buffer.concat(chunks).toString("utf8");
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited early:\n${output()}`);
    if (Date.now() > deadline) {
      killNow(child, "SIGKILL");
      throw new Error(`${name} did not become ready at ${url}:\n${output()}`);
    }
    try {
      if (await ready(url)) break;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  return {
    name,
    pid: child.pid!,
    url,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return closed;
      child.stdin!.end();
      killNow(child, "SIGTERM");
      const t = setTimeout(() => killNow(child, "SIGKILL"), 5_000);
      await closed;
      clearTimeout(t);
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      if (a === null || typeof a === "string") return reject(new Error("no port"));
      srv.close(() => resolve(a.port));
    });
  });
}

/** VmRSS of `pid` in bytes (0 when it cannot be read). */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const TICK = 100; // USER_HZ on Linux
/** user + system CPU seconds of `pid` so far. */
export function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICK;
  } catch {
    return 0;
  }
}

/** Child pids of `pid` (from /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  try {
    const out: number[] = [];
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
    return out;
  } catch {
    return [];
  }
}

/** CPU seconds of `pid` and every process below it (a node:cluster primary and its workers). */
export function cpuOfTree(pid: number): number {
  return cpuOf(pid) + childrenOf(pid).reduce((sum, child) => sum + cpuOfTree(child), 0);
}

/** Samples VmRSS every `everyMs` while running; `stop()` gives baseline, peak and CPU used. */
export function sampleRss(pid: number, everyMs = 50): { stop(): { baseline: number; peak: number; growth: number; cpuSeconds: number } } {
  const baseline = rssOf(pid);
  const cpu0 = cpuOf(pid);
  let peak = baseline;
  const timer = setInterval(() => {
    const r = rssOf(pid);
    if (r > peak) peak = r;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const r = rssOf(pid);
      if (r > peak) peak = r;
      return { baseline, peak, growth: peak - baseline, cpuSeconds: cpuOf(pid) - cpu0 };
    },
  };
}

export interface CmdResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion with a hard timeout (in `cwd`, default this process's). */
export function runCmd(cmd: string, args: readonly string[], timeoutMs = 300_000, cwd?: string): Promise<CmdResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [...args], { stdio: ["ignore", "pipe", "pipe"], cwd });
    children.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    const t = setTimeout(() => killNow(child, "SIGKILL"), timeoutMs);
    child.on("error", (e) => (clearTimeout(t), children.delete(child), reject(e)));
    child.on("close", (code) => {
      clearTimeout(t);
      children.delete(child);
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
  });
}

export interface WrkResult {
  requestsPerSec: number;
  requests: number;
  non2xx: number;
  errors: number;
  latencyP50: string;
  latencyP99: string;
}

/** `wrk -t<threads> -c<connections> -d<seconds>s --latency [-H …] url`, parsed. */
export async function wrk(bin: string, url: string, opts: { threads: number; connections: number; seconds: number; headers?: string[] }): Promise<WrkResult> {
  const args = [`-t${opts.threads}`, `-c${opts.connections}`, `-d${opts.seconds}s`, "--latency"];
  for (const h of opts.headers ?? []) args.push("-H", h);
  args.push(url);
  const r = await runCmd(bin, args, (opts.seconds + 30) * 1000);
  if (r.code !== 0) throw new Error(`wrk failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  const num = (re: RegExp): number => {
    const m = re.exec(r.stdout);
    return m ? Number(m[1]) : 0;
  };
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(r.stdout);
  return {
    requestsPerSec: num(/Requests\/sec:\s+([\d.]+)/),
    requests: num(/(\d+) requests in/),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    errors: errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    latencyP50: /\s50%\s+(\S+)/.exec(r.stdout)?.[1] ?? "?",
    latencyP99: /\s99%\s+(\S+)/.exec(r.stdout)?.[1] ?? "?",
  };
}
