/**
 * The Node flags `npm start` runs registry-kit with, read from package.json's
 * `start` script: the bench's registry-kit processes start with the same ones
 * (bench/run.ts, bench/compare.ts), so the two cannot drift apart.
 */
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: { start: string } };

/** The `--…` arguments of `node` in `npm start`, space-separated. */
export const NPM_START_NODE_FLAGS = pkg.scripts.start
  .split(" ")
  .filter((arg) => arg.startsWith("--"))
  .join(" ");
