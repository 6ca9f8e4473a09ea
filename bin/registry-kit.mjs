#!/usr/bin/env node
// registry-kit's command line. Runs the built dist/ when present (the one-file
// bundle of the CLI, with a V8 code cache of its own; else its tsup entry); in
// a fresh clone (no build step) it runs the TypeScript sources through tsx.
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

// Node 22.1+ keeps V8's compiled code of the ES modules loaded next on disk
// (this file's imports, the tsup build; in the OS temp directory;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off). The bundle has its own cache.
module.enableCompileCache?.();

const root = new URL("../", import.meta.url);
const bundle = fileURLToPath(new URL("dist/cli/registry-kit.cjs", root));
const entry = new URL("dist/cli/main.js", root);

let cli;
let cached;
if (existsSync(bundle)) {
  const { runCached, codeCacheDir } = await import(new URL("dist/cli/code-cache.mjs", root).href);
  cached = runCached(bundle, codeCacheDir());
  cli = cached.exports;
} else if (existsSync(fileURLToPath(entry))) {
  cli = await import(entry.href);
} else {
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch {
    process.stderr.write("registry-kit: dist/ is not built and tsx is not installed; run `npm run build` or `npm install tsx`.\n");
    process.exit(1);
  }
  register();
  cli = await import(new URL("src/cli/main.ts", root).href);
}

const code = await cli.main(process.argv.slice(2));
if (code !== undefined) process.exit(code);
// The server is up: once its first requests had a moment to run (or when it
// stops before), keep what V8 compiled for the next start (only when there
// was no usable cache; only `serve`, whose start is the one worth caching).
if (cached) {
  setTimeout(() => cached.save(), 1000).unref();
  process.once("exit", () => cached.save());
}
