/**
 * Running real programs from interop tests: resolve a binary (failing, never
 * skipping, when it is missing), run a command with a hard timeout, start a
 * long-running server and make sure it dies with the test, and pick a free
 * loopback port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** Debian package that provides each tool the interop tests drive. */
export const TOOL_PACKAGES: Record<string, string> = {
  skopeo: "skopeo",
  podman: "podman",
  buildah: "buildah",
  "docker-registry": "docker-registry",
  openstack: "python3-openstackclient",
  jq: "jq",
  curl: "curl",
  newuidmap: "uidmap",
  chromium: "chromium",
  setpriv: "util-linux",
  promtool: "prometheus",
};

/**
 * Absolute path of `name` on PATH. When it is missing the test fails with the
 * command that installs it: interop tests never skip.
 */
export function requireTool(name: string): string {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const extra of ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]) {
    if (!dirs.includes(extra)) dirs.push(extra);
  }
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  const pkg = TOOL_PACKAGES[name] ?? name;
  throw new Error(
    `interop test needs the program "${name}", which is not on PATH; install it: apt-get install -y ${pkg}`,
  );
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Replace the whole environment instead of extending process.env. */
  replaceEnv?: boolean;
  cwd?: string;
  /** Hard limit; the process group is killed with SIGKILL when it is reached. Default 120 s. */
  timeoutMs?: number;
  /** Written to stdin, which is then closed. Without it stdin is /dev/null. */
  input?: string | Uint8Array;
}

export interface RunResult {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function formatCommand(cmd: string, args: readonly string[]): string {
  return [cmd, ...args].map(quote).join(" ");
}

/** A readable account of a finished command, for assertion messages. */
export function describeRun(r: RunResult): string {
  const status = r.timedOut ? "TIMED OUT (killed)" : r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
  return [
    `$ ${r.command}`,
    `-> ${status} after ${r.durationMs} ms`,
    `--- stdout ---`,
    r.stdout.length > 20_000 ? r.stdout.slice(0, 20_000) + "\n…(truncated)" : r.stdout,
    `--- stderr ---`,
    r.stderr.length > 20_000 ? r.stderr.slice(-20_000) : r.stderr,
  ].join("\n");
}

/** Run a command to completion (or until the hard timeout), capturing its output. */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const started = Date.now();
  const env = opts.replaceEnv ? { ...opts.env } : { ...process.env, ...opts.env };
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(cmd, [...args], {
        env,
        cwd: opts.cwd,
        stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        detached: true, // own process group, so a timeout kills helpers it started too
      });
    } catch (err) {
      reject(err);
      return;
    }
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let timedOut = false;
    child.stdout?.on("data", (b: Buffer) => out.push(b));
    child.stderr?.on("data", (b: Buffer) => errOut.push(b));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, "SIGKILL");
    }, timeoutMs);
    tracked.add(child);
    child.on("error", (err) => {
      clearTimeout(timer);
      tracked.delete(child);
      reject(new Error(`cannot run ${formatCommand(cmd, args)}: ${err.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      tracked.delete(child);
      resolve({
        command: formatCommand(cmd, args),
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(errOut).toString("utf8"),
        timedOut,
        durationMs: Date.now() - started,
      });
    });
    if (opts.input !== undefined && child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(opts.input);
    }
  });
}

/** Like run(), but throws with the full output unless the command exits 0. */
export async function runOk(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0 || r.timedOut) throw new Error(`command failed:\n${describeRun(r)}`);
  return r;
}

// ---------------------------------------------------------------------------
// Long-running processes (servers)

const tracked = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Whatever happens to the test (failure, timeout, worker teardown), the
  // servers it started must not outlive the test process.
  process.on("exit", () => {
    for (const child of tracked) killGroup(child, "SIGKILL");
  });
}

const WATCHDOG = [
  'parent="$1"; shift',
  '"$@" & child=$!',
  'trap \'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 143\' TERM INT',
  'while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1 & wait $!; done',
  'kill -TERM "$child" 2>/dev/null',
  'wait "$child"',
].join("\n");

export interface Background {
  child: ChildProcess;
  command: string;
  /** Everything the process wrote so far (stdout and stderr interleaved). */
  output(): string;
  exited(): boolean;
  /** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export function startBackground(cmd: string, args: readonly string[], opts: Omit<RunOptions, "input" | "timeoutMs"> = {}): Background {
  installExitHook();
  const env = opts.replaceEnv ? { ...opts.env } : { ...process.env, ...opts.env };
  // The server runs under a tiny sh watchdog that stops it when this test
  // process disappears, even by SIGKILL (when no exit hook can run).
  const child = spawn("/bin/sh", ["-c", WATCHDOG, "watchdog", String(process.pid), cmd, ...args], {
    env,
    cwd: opts.cwd,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  tracked.add(child);
  const chunks: Buffer[] = [];
  let size = 0;
  const keep = (b: Buffer) => {
    chunks.push(b);
    size += b.length;
    while (size > 4_000_000 && chunks.length > 1) size -= chunks.shift()!.length;
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const closed = new Promise<void>((resolve) => {
    child.on("close", () => {
      tracked.delete(child);
      resolve();
    });
    child.on("error", () => {
      tracked.delete(child);
      resolve();
    });
  });
  return {
    child,
    command: formatCommand(cmd, args),
    output: () => Buffer.concat(chunks).toString("utf8"),
    exited: () => child.exitCode !== null || child.signalCode !== null,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return closed;
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      if (addr === null || typeof addr === "string") {
        srv.close();
        reject(new Error("no port"));
        return;
      }
      srv.close(() => resolve(addr.port));
    });
  });
}

/** Poll `probe` until it returns true or `timeoutMs` passes. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000, detail?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}` +
      (lastError ? ` (last error: ${String(lastError)})` : "") +
      (detail ? `\n${detail()}` : ""),
  );
}

/**
 * A fresh temporary directory, created on first use of `path` (so a
 * describe-level one costs nothing when a `-t` filter skips its suite and its
 * afterAll never runs); `remove()` deletes it if it was created.
 */
export function tempDir(prefix: string): { readonly path: string; remove(): void } {
  let path: string | undefined;
  const safe = prefix.replace(/[^\w.-]+/g, "-");
  return {
    get path() {
      path ??= mkdtempSync(join(tmpdir(), `rk-interop-${safe}-`));
      return path;
    },
    remove() {
      if (path !== undefined) rmSync(path, { recursive: true, force: true, maxRetries: 3 });
      path = undefined;
    },
  };
}
