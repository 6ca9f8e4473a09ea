/**
 * Distribution's environment overrides: `REGISTRY_<SECTION>_<KEY>…` sets the
 * key at that path, e.g. `REGISTRY_HTTP_ADDR=:5000` or
 * `REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY=/srv/registry`.
 * `REGISTRY_KIT_*` variables are registry-kit's own and are not overrides.
 * A variable that names no key is ignored with Distribution's warning, as
 * Distribution 2.8 does: Kubernetes sets `REGISTRY_PORT`,
 * `REGISTRY_SERVICE_HOST`, … for a Service named `registry` (issue 43).
 *
 * @module
 */
import { SCHEMA, type KeySpec } from "./config-schema.js";

/** Storage keys that are not the driver. */
export const STORAGE_OPTIONS = new Set(["delete", "cache", "maintenance", "redirect", "tag"]);

/** Where an overridden key came from, for messages: dotted path → variable name. */
export type EnvSources = Map<string, string>;

/**
 * Sections that are maps in Distribution's Go configuration (a driver or an
 * access controller by name): any key below them is taken, as there, and
 * judged by the schema check later (an unknown driver stops start-up).
 */
const OPEN_SECTIONS = new Set(["storage", "auth"]);

/**
 * Return a copy of `document` with every `REGISTRY_*` override applied.
 * Values are strings (typed later by the key's parser); a value starting with
 * `{` or `[` is read as YAML/JSON, for map-valued keys such as `http.headers`.
 * `REGISTRY_STORAGE=<driver>` selects the storage driver, dropping the others.
 */
export function applyEnvOverrides(
  document: Record<string, unknown>,
  env: Record<string, string | undefined>,
  parseYaml: (text: string) => unknown,
): { document: Record<string, unknown>; sources: EnvSources; ignored: string[] } {
  const doc = structuredClone(document);
  const sources: EnvSources = new Map();
  const ignored: string[] = [];
  const names = Object.keys(env)
    .filter((name) => name.startsWith("REGISTRY_") && !name.startsWith("REGISTRY_KIT_") && env[name] !== undefined)
    .sort((a, b) => a.length - b.length); // parents before children
  for (const name of names) {
    const raw = env[name] as string;
    const path = name.slice("REGISTRY_".length).toLowerCase().split("_").filter(Boolean);
    if (path.length === 0) continue;
    if (!namesKey(path)) {
      ignored.push(name);
      continue;
    }
    if (path.length === 1 && path[0] === "storage") {
      selectStorageDriver(doc, raw.trim().toLowerCase());
      sources.set("storage", name);
      continue;
    }
    const trimmed = raw.trim();
    const value = trimmed.startsWith("{") || trimmed.startsWith("[") ? parseYaml(trimmed) : raw;
    setPath(doc, path, value);
    sources.set(path.join("."), name);
  }
  return { document: doc, sources, ignored: ignored.sort() };
}

/** Distribution's warning for a variable that names no key, word for word. */
export function ignoredVariableWarning(name: string): string {
  return `Ignoring unrecognized environment variable ${name}`;
}

/**
 * Whether `path` names a key Distribution's configuration (or `registrykit`)
 * has: each segment a known field, down to a value or an open section.
 */
function namesKey(path: readonly string[]): boolean {
  let spec: KeySpec = SCHEMA;
  for (const segment of path) {
    if (typeof spec === "string") return true; // a value or a free-form map: the rest is its business
    const next: KeySpec | undefined = Object.hasOwn(spec, segment) ? spec[segment] : undefined;
    if (next === undefined) return false;
    if (spec === SCHEMA && OPEN_SECTIONS.has(segment)) return true;
    spec = next;
  }
  return true;
}

function selectStorageDriver(doc: Record<string, unknown>, driver: string): void {
  const storage = isMap(doc.storage) ? doc.storage : {};
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(storage)) if (STORAGE_OPTIONS.has(key) || key === driver) kept[key] = value;
  if (!(driver in kept)) kept[driver] = {};
  doc.storage = kept;
}

function setPath(doc: Record<string, unknown>, path: string[], value: unknown): void {
  let node = doc;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (!isMap(next)) node[segment] = {};
    node = node[segment] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

/** A plain object (YAML map). */
export function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
