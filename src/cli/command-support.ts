/**
 * What the maintenance commands (`gc`, `verify`) share: they open the storage
 * `serve` would open with the same CONFIG and environment, and print sizes
 * alike.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { parseConfigText, resolveConfig, type AllInOneConfig } from "../server/config/config.js";
import type { CliIo } from "./io.js";

/**
 * The configuration `registry-kit serve [file]` would run with. Throws (a
 * `ConfigError`, or the error reading `file`) when it is invalid; warnings
 * are `serve`'s business and dropped.
 */
export async function loadCommandConfig(file: string | undefined, io: CliIo): Promise<AllInOneConfig> {
  const document = file === undefined ? undefined : parseConfigText(await readFile(file, "utf8"), file);
  return resolveConfig({ document, env: io.env, cwd: io.cwd }).config;
}

export { formatBytes } from "../util/size.js";
