#!/usr/bin/env node
// registry-kit's command line. Uses the built dist/ when present; in a fresh
// clone (no build step) it runs the TypeScript sources through tsx.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = new URL("../", import.meta.url);
const built = new URL("dist/cli/main.js", root);

let cli;
if (existsSync(fileURLToPath(built))) {
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
