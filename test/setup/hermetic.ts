/**
 * Setup file of the `unit` project: keeps it hermetic. Starting a child
 * process or listening on a socket throws, so a test that needs either fails
 * here instead of slowing every run down; list it under SYSTEM in
 * vitest.config.ts. Runs in the test workers (not in vitest itself), before
 * every file: with `isolate: false` the patched modules are shared, and stay so.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";

const HINT = "the unit project is hermetic: list this test file under SYSTEM in vitest.config.ts";

function refuse(what: string): () => never {
  return () => {
    throw new Error(`${what} in a unit test; ${HINT}`);
  };
}

for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(`child_process.${name}()`);
}
net.Server.prototype.listen = refuse("listening on a socket") as unknown as typeof net.Server.prototype.listen;
// Named imports (`import { spawn } from "node:child_process"`) see the refusals too.
syncBuiltinESMExports();
