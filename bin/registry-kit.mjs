#!/usr/bin/env node
// registry-kit's command line. Runs the built dist/ when present (the one-file
// bundle of the CLI, else its tsup entry); in a fresh clone (no build step) it
// runs the TypeScript sources through tsx.
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

// Node 22.1+ keeps V8's compiled code of what is loaded next on disk (in the
// OS temp directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so later
// starts skip most compilation. Node 20 has no such cache.
module.enableCompileCache?.();

const root = new URL("../", import.meta.url);
const built = [new URL("dist/cli/registry-kit.mjs", root), new URL("dist/cli/main.js", root)].find((url) => existsSync(fileURLToPath(url)));

let cli;
if (built) {
  cli = await import(built.href);
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
