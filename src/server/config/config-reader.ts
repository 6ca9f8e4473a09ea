/**
 * Reading keys out of a configuration document (after the environment
 * overrides): every section of `resolveConfig()` reads through one
 * {@link ConfigReader}, so a key named in an error says where its value came
 * from (`storage.s3.bucket (from REGISTRY_STORAGE_S3_BUCKET)`).
 *
 * @module
 */
import path from "node:path";
import { isMap, type EnvSources } from "./config-env.js";

/** The value of a dotted key parsed by `parse`, or `undefined` when the key is absent or null. */
export type OptionalValue = <T>(key: string, parse: (key: string, value: unknown) => T) => T | undefined;

/** Access to one configuration document. */
export interface ConfigReader {
  /** The document, environment overrides applied. */
  doc: Record<string, unknown>;
  /** The raw value of a dotted key (`undefined` when a section on the way is missing). */
  get(key: string): unknown;
  /** The parsed value of a dotted key; the parser's errors name the key via {@link ConfigReader.named}. */
  opt: OptionalValue;
  /** The key as error messages show it: with the environment variable it came from, if any. */
  named(key: string): string;
  /** A path from the configuration, made absolute against the working directory. */
  abs(p: string): string;
  /** The environment (defaults such as `REGISTRY_KIT_ADMIN_USER`, AWS credentials). */
  env: Record<string, string | undefined>;
}

/** A reader over `doc`, whose overridden keys are listed in `sources`. */
export function configReader(
  doc: Record<string, unknown>,
  sources: EnvSources,
  cwd: string,
  env: Record<string, string | undefined>,
): ConfigReader {
  const named = (key: string): string => (sources.has(key) ? `${key} (from ${sources.get(key)})` : key);
  const get = (key: string): unknown => key.split(".").reduce<unknown>((node, k) => (isMap(node) ? node[k] : undefined), doc);
  const opt: OptionalValue = (key, parse) => {
    const value = get(key);
    return value === undefined || value === null ? undefined : parse(named(key), value);
  };
  return { doc, get, opt, named, abs: (p) => path.resolve(cwd, p), env };
}
