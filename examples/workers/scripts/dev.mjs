#!/usr/bin/env node
/**
 * `npm run dev`: `wrangler dev` (arguments passed on) in a process group of its
 * own, stopped whole on SIGINT, SIGTERM or SIGHUP, or when the `npm run` that
 * started it is gone. wrangler runs workerd (and esbuild) as children, and a
 * SIGTERM to `npx wrangler` or `npm run` ends npm alone: wrangler and workerd
 * went on serving the port. Here the whole group gets the signal, and SIGKILL
 * after 5 s if anything of it is still there.
 *
 * WRANGLER names the command to run (default: this project's
 * node_modules/.bin/wrangler, else `wrangler` on the PATH).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const GRACE_MS = 5000;

// wrangler 4 needs Node 22 or later; say so rather than let it fail on a missing API.
if (Number(process.versions.node.split(".")[0]) < 22) {
  console.error(`wrangler needs Node.js 22 or later; this is Node.js ${process.versions.node}`);
  process.exit(1);
}

const local = fileURLToPath(new URL("../node_modules/.bin/wrangler", import.meta.url));
const command = process.env.WRANGLER || (existsSync(local) ? local : "wrangler");
// detached: the child leads a new process group, so its children can be signalled with it.
// No stdin: a background group that reads the terminal would be stopped (SIGTTIN).
const child = spawn(command, ["dev", ...process.argv.slice(2)], { stdio: ["ignore", "inherit", "inherit"], detached: true });

/** Whether any process of the group is left. */
function groupAlive() {
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signal the whole group; false when it is gone. */
function signalGroup(signal) {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

let stopping = false;
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  signalGroup(signal === "SIGHUP" ? "SIGTERM" : signal);
  for (const end = Date.now() + GRACE_MS; groupAlive() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive()) signalGroup("SIGKILL");
  process.exit(0);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void stop(signal));
// SIGTERM to `npm run dev` ends npm and its shell but is not passed on: this process then has another parent.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop("SIGTERM");
}, 250).unref();

child.on("error", (error) => {
  console.error(`cannot run ${command}: ${error.message} (npm install in this folder first)`);
  process.exit(1);
});
// wrangler ended by itself: leave none of its children behind.
child.on("exit", (code, signal) => {
  if (stopping) return;
  signalGroup("SIGTERM");
  process.exit(code ?? (signal ? 1 : 0));
});
