/**
 * examples/workers' `npm run dev` with the real wrangler and workerd (issue 41,
 * item 17): a SIGTERM to npm must stop wrangler and every workerd it started,
 * and free the port. Before, `"dev": "wrangler dev"` left wrangler and workerd
 * serving after npm was gone. The example's package.json and scripts/dev.mjs
 * are copied as they are; the Worker is a one-line one (the real src/index.ts
 * needs a build of dist/ and secrets, which the signal handling does not).
 * wrangler, workerd and Node 24 (wrangler needs 22+) are the ones
 * scripts/runtimes.mjs fetches for the workerd suites.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { delimiter, dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, requireTool, tempDir, waitFor } from "./helpers/process.js";

const ROOT = resolve(import.meta.dirname, "../..");
const EXAMPLE = join(ROOT, "examples/workers");

function node24(): string {
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/runtimes.mjs"), "paths"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`scripts/runtimes.mjs paths failed:\n${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, string[]>)["node@24"]![0]!;
}

/** Every process below `root` (from /proc), deepest last. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces and parentheses.
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number): void => {
    for (const [child, parent] of parentOf) if (parent === pid) found.push(child), walk(child);
  };
  walk(root);
  return found;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const commandOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
};
const portOpen = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), done(true)));
    socket.once("error", () => done(false));
  });

describe("examples/workers: npm run dev", () => {
  const work = tempDir("workers-dev");
  let npm: ChildProcess | undefined;
  let started: number[] = [];
  afterAll(() => {
    // Whatever of it is still there (the failure case): these processes were started here.
    for (const pid of started) if (alive(pid)) process.kill(pid, "SIGKILL");
    work.remove();
  });

  it("SIGTERM to npm stops wrangler and every workerd it started, and frees the port", async () => {
    const node = node24();
    // wrangler as @cloudflare/vitest-plugin depends on it (hoisted or not, as npm laid it out).
    const plugin = createRequire(join(ROOT, ".runtimes/node_modules/@cloudflare/vitest-plugin/package.json"));
    const wrangler = dirname(plugin.resolve("wrangler/package.json"));
    const dir = join(work.path, "workers");
    mkdirSync(join(dir, "src"), { recursive: true });
    cpSync(join(EXAMPLE, "package.json"), join(dir, "package.json"));
    cpSync(join(EXAMPLE, "scripts"), join(dir, "scripts"), { recursive: true });
    writeFileSync(join(dir, "wrangler.toml"), 'name = "dev-signal-test"\nmain = "src/index.js"\ncompatibility_date = "2026-01-01"\n');
    writeFileSync(join(dir, "src/index.js"), 'export default { fetch: () => new Response("ok") };\n');
    // As `npm install` in the folder would leave it: node_modules/.bin/wrangler.
    mkdirSync(join(dir, "node_modules/.bin"), { recursive: true });
    symlinkSync(join(wrangler, "bin/wrangler.js"), join(dir, "node_modules/.bin/wrangler"));

    const port = await freePort();
    let output = "";
    npm = spawn(requireTool("npm"), ["run", "dev", "--", "--ip", "127.0.0.1", "--port", String(port)], {
      cwd: dir,
      env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`, CI: "1", WRANGLER_SEND_METRICS: "false", HOME: work.path },
      stdio: ["ignore", "pipe", "pipe"],
    });
    npm.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    npm.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    const npmPid = npm.pid!;
    await waitFor(
      "the Worker to answer",
      async () => (await fetch(`http://127.0.0.1:${port}/`)).status === 200,
      180_000,
      () => output,
    );
    started = descendants(npmPid);
    const workerd = started.filter((pid) => /workerd/.test(commandOf(pid)));
    expect(workerd.length, started.map(commandOf).join("\n")).toBeGreaterThan(0);
    expect(started.some((pid) => /wrangler/.test(commandOf(pid)))).toBe(true);

    process.kill(npmPid, "SIGTERM");
    await waitFor(
      "wrangler and workerd to stop",
      async () => started.every((pid) => !alive(pid)),
      15_000,
      () => `still running:\n${started.filter(alive).map((pid) => `${pid} ${commandOf(pid)}`).join("\n")}\n${output}`,
    );
    expect(await portOpen(port)).toBe(false);
  }, 240_000);
});
