/**
 * The `validation` section as Distribution reads it: on unless
 * `disabled: true` (the deprecated `enabled: true` wins over it); then layer
 * URLs must match `manifests.urls.allow` and not `deny`, and with neither list
 * no URL is accepted; `manifests.indexes.platforms` (`all`, `none`, `list` with
 * `platformlist`, Distribution 3) says which child manifests of an index must
 * be in the repository. Off, URLs are only checked to be http(s) without a
 * fragment and indexes are not checked (as Distribution 3).
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import { bool, ConfigError, str } from "./config-values.js";
import type { IndexPlatform, ManifestValidation } from "../../registry/index.js";

/** Read `validation` into `createRegistry`'s `manifestValidation`. */
export function resolveValidation({ opt }: ConfigReader): ManifestValidation {
  const enabled = opt("validation.enabled", bool) === true || opt("validation.disabled", bool) !== true;
  if (!enabled) return { urls: {}, indexes: "none" };
  const allow = opt("validation.manifests.urls.allow", patternList) ?? [];
  const deny = opt("validation.manifests.urls.deny", patternList) ?? [];
  const urls = allow.length === 0 && deny.length === 0
    ? { allow: [] }
    : { ...(allow.length > 0 ? { allow } : {}), ...(deny.length > 0 ? { deny } : {}) };
  const platforms = opt("validation.manifests.indexes.platforms", platformsWord) ?? "all";
  if (platforms !== "list") return { urls, indexes: platforms };
  const list = opt("validation.manifests.indexes.platformlist", platformList) ?? [];
  // Distribution checks every child when the list is empty.
  if (list.length === 0) return { urls, indexes: "all" };
  return { urls, indexes: { platforms: list } };
}

/**
 * A list of Go regular expressions (one string is one expression), compiled
 * as JavaScript ones: the common syntax is the same; leading flags such as
 * `(?i)` become the expression's flags. One JavaScript cannot read stops
 * start-up naming its entry.
 */
function patternList(key: string, value: unknown): RegExp[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((item, i) => {
    const where = `${key}[${i}]`;
    const source = str(where, item);
    const flags = /^\(\?([imsU]+)\)/.exec(source);
    if (flags?.[1]?.includes("U")) throw new ConfigError(where, "the U (ungreedy) flag has no JavaScript equivalent");
    try {
      return new RegExp(flags ? source.slice(flags[0].length) : source, flags?.[1] ?? "");
    } catch (error) {
      throw new ConfigError(where, `not a regular expression registry-kit can use (${(error as Error).message}): ${JSON.stringify(source)}`);
    }
  });
}

/** `all`, `none` or `list`, in any case, as Distribution 3. */
function platformsWord(key: string, value: unknown): "all" | "none" | "list" {
  const word = str(key, value).toLowerCase();
  if (word !== "all" && word !== "none" && word !== "list") throw new ConfigError(key, `expected all, none or list, got ${JSON.stringify(value)}`);
  return word;
}

/** `platformlist`: a list of `{ architecture, os }`. */
function platformList(key: string, value: unknown): IndexPlatform[] {
  if (!Array.isArray(value)) throw new ConfigError(key, "expected a list of { architecture, os }");
  return value.map((item: unknown, i) => {
    const where = `${key}[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ConfigError(where, "expected { architecture, os }");
    const entry = item as Record<string, unknown>;
    return { architecture: str(`${where}.architecture`, entry.architecture), os: str(`${where}.os`, entry.os) };
  });
}
