/**
 * Flavors (machine sizes) of the example's compute service: the records, and
 * the read routes `openstack flavor list`, `openstack flavor show` and
 * `openstack server list --long` use. Mounted by `compute.ts` below
 * `/v2.1/flavors`, behind its token and microversion checks.
 *
 * | Route | Answer |
 * |---|---|
 * | `GET /v2.1/flavors` | `{"flavors":[{id,name,links}]}` (+ `description` from 2.55) |
 * | `GET /v2.1/flavors/detail` | the same flavors, full records |
 * | `GET /v2.1/flavors/{id}` | `{"flavor":{…}}` |
 * | `GET /v2.1/flavors/{id}/os-extra_specs` | `{"extra_specs":{…}}` |
 * | `GET /v2.1/flavors/{id}/os-extra_specs/{key}` | `{"<key>":"<value>"}` |
 *
 * The lists take nova's query parameters: `is_public` (`true`, `false` or
 * `none`; honoured for administrators, who alone may see private flavors in
 * nova; every flavor of this example is public), `minRam`, `minDisk`,
 * `sort_key` / `sort_dir` (default `flavorid` ascending), `limit` and `marker`
 * (a flavor id), with a `flavors_links` next link when a page is cut short.
 *
 * Why the extra-specs route matters: openstacksdk asks for microversion 2.61,
 * where extra specs come embedded, but when a flavor's `extra_specs` is empty
 * it fetches `/os-extra_specs` for that flavor anyway (`flavor list` for every
 * flavor, `flavor show` for the one shown), and fails the whole command on a 404.
 *
 * @module
 */
import { json } from "./http.js";
import { ComputeError } from "./errors.js";
import { compareMicroversions, type Microversion } from "./microversion.js";
import type { TokenRecord } from "./tokens.js";
import { pageByMarker } from "./paging.js";

/** A flavor (machine size). */
export interface FlavorRecord {
  id: string;
  name: string;
  vcpus: number;
  /** MiB. */
  ram: number;
  /** GiB. */
  disk: number;
  /** GiB. */
  ephemeral?: number;
  /** MiB. */
  swap?: number;
  /** Shown from microversion 2.55. */
  description?: string;
  /** Key/value properties (`hw:cpu_policy`, …): `extra_specs` from 2.61 and under `/os-extra_specs`. */
  extraSpecs?: Readonly<Record<string, string>>;
}

/** Flavors used when none are configured. */
export const DEFAULT_FLAVORS: readonly FlavorRecord[] = [
  { id: "1", name: "m1.tiny", vcpus: 1, ram: 512, disk: 1 },
  { id: "2", name: "m1.small", vcpus: 1, ram: 2048, disk: 20 },
  { id: "3", name: "m1.medium", vcpus: 2, ram: 4096, disk: 40, extraSpecs: { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" } },
];

const at = (v: Microversion, minor: number) => compareMicroversions(v, { major: 2, minor }) >= 0;

const SORT_KEYS: Record<string, (f: FlavorRecord) => string | number> = {
  flavorid: (f) => f.id,
  id: (f) => f.id,
  name: (f) => f.name,
  memory_mb: (f) => f.ram,
  root_gb: (f) => f.disk,
  ephemeral_gb: (f) => f.ephemeral ?? 0,
  swap: (f) => f.swap ?? 0,
  vcpus: (f) => f.vcpus,
  description: (f) => f.description ?? "",
};

/**
 * Answer a flavor route. `parts` are the path segments after `flavors`
 * (`[]`, `["detail"]`, `[id]`, `[id, "os-extra_specs"]`, `[id, "os-extra_specs", key]`);
 * `base` is the service root URL for links.
 */
export function flavorRoute(
  parts: readonly string[],
  query: URLSearchParams,
  base: string,
  version: Microversion,
  token: TokenRecord,
  flavors: readonly FlavorRecord[],
  maxLimit: number,
): Response {
  const [first, second, key, ...extra] = parts;
  if (first === undefined || (first === "detail" && second === undefined)) {
    const detail = first === "detail";
    const { page, next } = listFlavors(flavors, query, token, maxLimit);
    const body: Record<string, unknown> = { flavors: page.map((f) => (detail ? flavorDetail(f, base, version) : flavorSummary(f, base, version))) };
    if (next) {
      const q = new URLSearchParams(query);
      q.set("marker", next);
      body.flavors_links = [{ rel: "next", href: `${base}/v2.1/flavors${detail ? "/detail" : ""}?${q}` }];
    }
    return json(body);
  }
  const f = flavors.find((x) => x.id === first);
  if (!f) throw new ComputeError(404, `Flavor ${first.slice(0, 64)} could not be found.`);
  if (second === undefined) return json({ flavor: flavorDetail(f, base, version) });
  if (second === "os-extra_specs" && extra.length === 0) {
    const specs = f.extraSpecs ?? {};
    if (key === undefined) return json({ extra_specs: { ...specs } });
    const name = decodeSegment(key);
    if (name === undefined || !Object.hasOwn(specs, name)) {
      throw new ComputeError(404, `Flavor ${f.id.slice(0, 64)} has no extra specs with key ${key.slice(0, 64)}.`);
    }
    return json({ [name]: specs[name] });
  }
  throw new ComputeError(404, "The resource could not be found.");
}

/** A percent-decoded path segment (`hw%3Acpu_policy`), or `undefined` if malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The flavor as a server record embeds it from microversion 2.47 (`undefined`: a flavor no longer configured). */
export function embeddedFlavor(f: FlavorRecord | undefined, id: string) {
  return {
    vcpus: f?.vcpus ?? 0,
    ram: f?.ram ?? 0,
    disk: f?.disk ?? 0,
    ephemeral: f?.ephemeral ?? 0,
    swap: f?.swap ?? 0,
    original_name: f?.name ?? id,
    extra_specs: { ...(f?.extraSpecs ?? {}) },
  };
}

function links(base: string, id: string) {
  return [
    { rel: "self", href: `${base}/v2.1/flavors/${id}` },
    { rel: "bookmark", href: `${base}/flavors/${id}` },
  ];
}

function flavorSummary(f: FlavorRecord, base: string, v: Microversion) {
  const out: Record<string, unknown> = { id: f.id, name: f.name, links: links(base, f.id) };
  if (at(v, 55)) out.description = f.description ?? null;
  return out;
}

function flavorDetail(f: FlavorRecord, base: string, v: Microversion) {
  const out: Record<string, unknown> = {
    id: f.id,
    name: f.name,
    links: links(base, f.id),
    vcpus: f.vcpus,
    ram: f.ram,
    disk: f.disk,
    "OS-FLV-EXT-DATA:ephemeral": f.ephemeral ?? 0,
    // Before 2.75 nova writes "" for no swap.
    swap: f.swap ? f.swap : at(v, 75) ? 0 : "",
    rxtx_factor: 1.0,
    "OS-FLV-DISABLED:disabled": false,
    "os-flavor-access:is_public": true,
  };
  if (at(v, 55)) out.description = f.description ?? null;
  if (at(v, 61)) out.extra_specs = { ...(f.extraSpecs ?? {}) };
  return out;
}

const TRUE = /^(1|t|true|on|y|yes)$/i;
const FALSE = /^(0|f|false|off|n|no)$/i;

/** Filter, sort and page as nova's flavor index does. */
function listFlavors(
  all: readonly FlavorRecord[],
  q: URLSearchParams,
  token: TokenRecord,
  maxLimit: number,
): { page: FlavorRecord[]; next: string | undefined } {
  let list = [...all];
  // Every flavor here is public: `is_public=false` (administrators only) lists none.
  const isPublic = q.get("is_public");
  if (token.admin && isPublic !== null && !/^none$/i.test(isPublic)) {
    if (FALSE.test(isPublic)) list = [];
    else if (!TRUE.test(isPublic)) throw new ComputeError(400, `Invalid is_public filter [${isPublic.slice(0, 40)}]`);
  }
  for (const [param, get] of [
    ["minRam", (f: FlavorRecord) => f.ram],
    ["minDisk", (f: FlavorRecord) => f.disk],
  ] as const) {
    const text = q.get(param);
    if (text === null) continue;
    if (!/^\d{1,9}$/.test(text)) throw new ComputeError(400, `Invalid ${param} filter [${text.slice(0, 40)}]`);
    list = list.filter((f) => get(f) >= Number(text));
  }

  const key = q.get("sort_key") ?? "flavorid";
  const dir = q.get("sort_dir") ?? "asc";
  const get = SORT_KEYS[key];
  if (!get) throw new ComputeError(400, `Invalid input for query parameters sort_key. Value: ${key.slice(0, 40)}.`);
  if (dir !== "asc" && dir !== "desc") throw new ComputeError(400, `Invalid input for query parameters sort_dir. Value: ${dir.slice(0, 40)}.`);
  const sign = dir === "asc" ? 1 : -1;
  list.sort((a, b) => {
    const x = get(a);
    const y = get(b);
    if (x !== y) return x < y ? -sign : sign;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });

  return pageByMarker(list, q, maxLimit);
}
