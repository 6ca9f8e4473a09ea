/**
 * The compute service of the example: the read side of a nova-compatible
 * Compute API v2.1 — version documents, servers and flavors — enough for
 * `openstack server list [--long]`, `openstack server show`, `openstack flavor list`
 * and `openstack flavor show`.
 *
 * Routes, below the service root (`root`, default `/`):
 *
 * | Route | What |
 * |---|---|
 * | `GET /` | `{"versions":[…]}` (no token needed) |
 * | `GET /v2.1` | `{"version":{…,"min_version":"2.1","version":"2.79"}}` (no token needed) |
 * | `GET /v2.1/servers` | `{"servers":[{id,name,links}]}` |
 * | `GET /v2.1/servers/detail` | the same servers, full records |
 * | `GET /v2.1/servers/{id}` | `{"server":{…}}` |
 * | `GET /v2.1/flavors`, `/flavors/detail`, `/flavors/{id}`, `/flavors/{id}/os-extra_specs[/{key}]` | flavors (see `flavors.ts`) |
 *
 * Every API route needs `X-Auth-Token`: missing, unknown or expired → 401;
 * a token without project scope → 403. The microversion comes from
 * `OpenStack-API-Version: compute 2.x` or `X-OpenStack-Nova-API-Version`
 * (default 2.1, `latest` = 2.79), is echoed in both headers, and shapes the
 * server records (2.9 `locked`, 2.19 `description`, 2.26 `tags`,
 * 2.47 embedded flavor, 2.73 `locked_reason`) and flavors (2.55 `description`,
 * 2.61 `extra_specs`, 2.75 `swap` 0). Outside 2.1–2.79 → 406.
 *
 * @module
 */
import type { LogHook } from "registry-kit";
import { silent } from "./http.js";
import { json } from "./http.js";
import { checkToken, type TokenValidator } from "./auth.js";
import { ComputeError, novaError } from "./errors.js";
import { DEFAULT_FLAVORS, embeddedFlavor, flavorRoute, type FlavorRecord } from "./flavors.js";
import {
  compareMicroversions,
  microversionHeaders,
  parseMicroversion,
  requestedMicroversion,
  type Microversion,
} from "./microversion.js";
import type { TokenRecord } from "./tokens.js";
import { baseUrl, isoSeconds, normaliseRoot, pathBelow, stableId, type Handler } from "./util.js";
import { COMPUTE_MAX_MICROVERSION, COMPUTE_MIN_MICROVERSION, computeVersionResponse, computeVersionsResponse } from "./versions.js";
import { pageByMarker } from "./paging.js";

/** One IP address of a server, as nova lists it under `addresses[network]`. */
export interface ServerAddress {
  addr: string;
  version: 4 | 6;
  /** `fixed` or `floating`. Default `fixed`. */
  type?: "fixed" | "floating";
  mac?: string;
}

/** A server (instance) the compute service lists. */
export interface ServerRecord {
  /** A UUID. */
  id: string;
  name: string;
  /** The project that owns the server; only tokens scoped to it see it. */
  projectId: string;
  userId?: string;
  /** `ACTIVE`, `SHUTOFF`, `PAUSED`, `SUSPENDED`, `BUILD`, `ERROR`, … Default `ACTIVE`. */
  status?: string;
  /** Milliseconds since the epoch. Default: when the service was created. */
  created?: number;
  updated?: number;
  /** A flavor id from the service's `flavors`. */
  flavorId: string;
  /** An image id; omit for a server booted from a volume. */
  imageId?: string;
  /** Network name → addresses. */
  addresses?: Record<string, ServerAddress[]>;
  metadata?: Record<string, string>;
  availabilityZone?: string;
  /** Compute host; shown to administrators only. */
  host?: string;
  keyName?: string;
  description?: string;
  tags?: string[];
  locked?: boolean;
}

export { DEFAULT_FLAVORS, type FlavorRecord } from "./flavors.js";

/** Where servers come from: a fixed list, or a function read on every request. */
export type ServerSource = readonly ServerRecord[] | (() => Promise<readonly ServerRecord[]> | readonly ServerRecord[]);

/** Options of {@link createComputeService}. */
export interface ComputeServiceOptions {
  /** Checks `X-Auth-Token`; pass `identity.validateToken`. */
  validateToken: TokenValidator;
  /** The servers. */
  servers: ServerSource;
  /** The flavors servers refer to. Default: {@link DEFAULT_FLAVORS}. */
  flavors?: readonly FlavorRecord[];
  /** Path the service is mounted at; the API is at `${root}/v2.1`. Default `/`. */
  root?: string;
  /** Absolute URL of the service root for links (default: the request's origin + `root`). */
  publicUrl?: string;
  /** The identity API URL (ending in `/v3`) for `WWW-Authenticate: Keystone uri=…` on 401. */
  identityUrl?: string;
  /** Largest page; `limit` above it is lowered to it, and it is the page size without `limit`. Default 1000. */
  maxLimit?: number;
  /** Structured log; never given token strings. */
  log?: LogHook;
}

const MIN = parseMicroversion(COMPUTE_MIN_MICROVERSION)!;
const MAX = parseMicroversion(COMPUTE_MAX_MICROVERSION)!;
const at = (v: Microversion, minor: number) => compareMicroversions(v, { major: 2, minor }) >= 0;

const POWER: Record<string, [vmState: string, power: number]> = {
  ACTIVE: ["active", 1],
  SHUTOFF: ["stopped", 4],
  PAUSED: ["paused", 3],
  SUSPENDED: ["suspended", 7],
  BUILD: ["building", 0],
  ERROR: ["error", 0],
};

const SORT_KEYS: Record<string, (s: ServerRecord) => string | number> = {
  created_at: (s) => s.created ?? 0,
  updated_at: (s) => s.updated ?? s.created ?? 0,
  display_name: (s) => s.name,
  uuid: (s) => s.id,
};

/** Create the compute service. */
export function createComputeService(options: ComputeServiceOptions): Handler {
  const root = normaliseRoot(options.root);
  const log = options.log ?? silent;
  const flavors = options.flavors ?? DEFAULT_FLAVORS;
  const maxLimit = options.maxLimit ?? 1000;
  const started = Date.now();
  const source = options.servers;
  const loadServers = async () => (typeof source === "function" ? await source() : source);

  return async (request) => {
    const url = new URL(request.url);
    const path = pathBelow(url, root);
    if (path === undefined) return novaError(404, "The resource could not be found.");
    const base = baseUrl(request, root, options.publicUrl);
    const read = request.method === "GET" || request.method === "HEAD";
    const strip = (r: Response) => (request.method === "HEAD" ? new Response(null, { status: r.status, headers: r.headers }) : r);

    if (path === "/" || path === "/v2.1") {
      if (!read) return novaError(405, "Method not allowed.", { allow: "GET, HEAD" });
      return strip(path === "/" ? computeVersionsResponse(base) : computeVersionResponse(base));
    }
    if (!path.startsWith("/v2.1/")) return novaError(404, "The resource could not be found.");

    const auth = await checkToken(request, options.validateToken, options.identityUrl);
    if ("response" in auth) {
      log({ level: "warn", msg: "compute request refused", status: 401, reason: auth.reason });
      return strip(auth.response);
    }
    const token = auth.record;

    const asked = requestedMicroversion(request.headers);
    let version: Microversion;
    if (asked.kind === "invalid") {
      return novaError(400, `API Version String ${asked.text.slice(0, 40)} is of invalid format. Must be of format MajorNum.MinorNum.`);
    } else if (asked.kind === "version") {
      if (compareMicroversions(asked.version, MIN) < 0 || compareMicroversions(asked.version, MAX) > 0) {
        return novaError(
          406,
          `Version ${asked.version.major}.${asked.version.minor} is not supported by the API. Minimum is ${COMPUTE_MIN_MICROVERSION} and maximum is ${COMPUTE_MAX_MICROVERSION}.`,
        );
      }
      version = asked.version;
    } else version = asked.kind === "latest" ? MAX : MIN;
    const vh = microversionHeaders(version);

    try {
      if (!token.project) {
        log({ level: "warn", msg: "compute request refused", status: 403, user: token.user.name, reason: "token has no project scope" });
        throw new ComputeError(403, "A project-scoped token is required: authenticate with auth.scope.project.");
      }
      if (!read) throw new ComputeError(405, "Method not allowed: this example's compute service is read-only.");
      const rest = path.slice("/v2.1".length);
      const view = new View(base, version, token, flavors, started);
      const response = await dispatch(rest, url.searchParams, view, token, loadServers, flavors, maxLimit);
      for (const [k, v] of Object.entries(vh)) response.headers.set(k, v);
      return strip(response);
    } catch (e) {
      if (e instanceof ComputeError) {
        const headers: Record<string, string> = { ...vh };
        if (e.status === 405) headers.allow = "GET, HEAD";
        return strip(novaError(e.status, e.message, headers));
      }
      log({ level: "error", msg: "compute request failed", error: e instanceof Error ? e.message : String(e) });
      return strip(novaError(500, "Unexpected API Error.", vh));
    }
  };
}

async function dispatch(
  rest: string,
  query: URLSearchParams,
  view: View,
  token: TokenRecord,
  loadServers: () => Promise<readonly ServerRecord[]>,
  flavors: readonly FlavorRecord[],
  maxLimit: number,
): Promise<Response> {
  const parts = rest.split("/").filter(Boolean);
  if (parts[0] === "servers") {
    if (parts.length === 1 || (parts.length === 2 && parts[1] === "detail")) {
      const detail = parts.length === 2;
      const all = await loadServers();
      const { page, next } = listServers(all, query, token, maxLimit);
      const body: Record<string, unknown> = {
        servers: page.map((s) => (detail ? view.detail(s) : view.summary(s))),
      };
      if (next) {
        const q = new URLSearchParams(query);
        q.set("marker", next);
        body.servers_links = [{ rel: "next", href: `${view.base}/v2.1/servers${detail ? "/detail" : ""}?${q}` }];
      }
      return json(body);
    }
    if (parts.length === 2) {
      const all = await loadServers();
      const s = all.find((x) => x.id === parts[1] && visible(x, token, false));
      if (!s) throw new ComputeError(404, `Instance ${parts[1]!.slice(0, 64)} could not be found.`);
      return json({ server: view.detail(s) });
    }
  }
  if (parts[0] === "flavors") return flavorRoute(parts.slice(1), query, view.base, view.version, token, flavors, maxLimit);
  throw new ComputeError(404, "The resource could not be found.");
}

function visible(s: ServerRecord, token: TokenRecord, allProjects: boolean): boolean {
  return allProjects || s.projectId === token.project?.id;
}

/**
 * Filter, sort and page the servers as nova does for the query parameters
 * `openstack server list` sends. Unknown parameters are ignored, as nova
 * does for non-administrators.
 */
function listServers(
  all: readonly ServerRecord[],
  q: URLSearchParams,
  token: TokenRecord,
  maxLimit: number,
): { page: ServerRecord[]; next: string | undefined } {
  const allTenants = truthy(q.get("all_tenants"));
  if (allTenants && !token.admin) throw new ComputeError(403, "Policy doesn't allow os_compute_api:servers:index:get_all_tenants to be performed.");
  const tenant = q.get("tenant_id") ?? q.get("project_id");
  let list = all.filter((s) => visible(s, token, allTenants) && (!allTenants || tenant === null || s.projectId === tenant));

  const name = q.get("name");
  if (name !== null) list = list.filter((s) => s.name.includes(name));
  const status = q.get("status");
  if (status !== null) list = list.filter((s) => (s.status ?? "ACTIVE").toUpperCase() === status.toUpperCase());
  const image = q.get("image");
  if (image !== null) list = list.filter((s) => s.imageId === image);
  const flavor = q.get("flavor");
  if (flavor !== null) list = list.filter((s) => s.flavorId === flavor);
  for (const [param, v] of [["ip", 4], ["ip6", 6]] as const) {
    const ip = q.get(param);
    if (ip !== null) {
      list = list.filter((s) => Object.values(s.addresses ?? {}).some((as) => as.some((a) => a.version === v && a.addr.includes(ip))));
    }
  }
  const since = q.get("changes-since");
  if (since !== null) {
    const t = Date.parse(since);
    if (Number.isNaN(t)) throw new ComputeError(400, "Invalid input for query parameters changes-since.");
    list = list.filter((s) => (s.updated ?? s.created ?? 0) >= t);
  }

  // Sort: nova's default is newest first, ties broken by id.
  const keys = q.getAll("sort_key");
  const dirs = q.getAll("sort_dir");
  if (keys.length === 0) keys.push("created_at");
  const sorters = keys.map((k, i) => {
    const get = SORT_KEYS[k];
    if (!get) throw new ComputeError(400, `Invalid input for query parameters sort_key. Value: ${k.slice(0, 40)}.`);
    const dir = dirs[i] ?? dirs[0] ?? "desc";
    if (dir !== "asc" && dir !== "desc") throw new ComputeError(400, `Invalid input for query parameters sort_dir. Value: ${dir.slice(0, 40)}.`);
    return { get, sign: dir === "asc" ? 1 : -1 };
  });
  list = [...list].sort((a, b) => {
    for (const { get, sign } of sorters) {
      const x = get(a);
      const y = get(b);
      if (x < y) return -sign;
      if (x > y) return sign;
    }
    return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
  });

  return pageByMarker(list, q, maxLimit);
}

function truthy(v: string | null): boolean {
  return v !== null && !/^(0|false|no|off|)$/i.test(v.trim());
}

/** Renders records as the requested microversion shows them. */
class View {
  constructor(
    readonly base: string,
    readonly version: Microversion,
    readonly token: TokenRecord,
    readonly flavors: readonly FlavorRecord[],
    readonly started: number,
  ) {}

  links(kind: string, id: string) {
    return [
      { rel: "self", href: `${this.base}/v2.1/${kind}/${id}` },
      { rel: "bookmark", href: `${this.base}/${kind}/${id}` },
    ];
  }

  summary(s: ServerRecord) {
    return { id: s.id, name: s.name, links: this.links("servers", s.id) };
  }

  detail(s: ServerRecord) {
    const status = (s.status ?? "ACTIVE").toUpperCase();
    const [vmState, power] = POWER[status] ?? ["active", 1];
    const created = s.created ?? this.started;
    const v = this.version;
    const flavor = this.flavors.find((f) => f.id === s.flavorId);
    const out: Record<string, unknown> = {
      id: s.id,
      name: s.name,
      status,
      tenant_id: s.projectId,
      user_id: s.userId ?? "",
      metadata: s.metadata ?? {},
      hostId: s.host ? stableId("host", s.projectId, s.host) : "",
      image: s.imageId
        ? { id: s.imageId, links: [{ rel: "bookmark", href: `${this.base}/images/${s.imageId}` }] }
        : "",
      flavor: at(v, 47)
        ? embeddedFlavor(flavor, s.flavorId)
        : { id: s.flavorId, links: [{ rel: "bookmark", href: `${this.base}/flavors/${s.flavorId}` }] },
      created: isoSeconds(created),
      updated: isoSeconds(s.updated ?? created),
      addresses: Object.fromEntries(
        Object.entries(s.addresses ?? {}).map(([net, list]) => [
          net,
          list.map((a) => ({
            version: a.version,
            addr: a.addr,
            "OS-EXT-IPS:type": a.type ?? "fixed",
            "OS-EXT-IPS-MAC:mac_addr": a.mac ?? "fa:16:3e:00:00:00",
          })),
        ]),
      ),
      accessIPv4: "",
      accessIPv6: "",
      links: this.links("servers", s.id),
      "OS-DCF:diskConfig": "MANUAL",
      progress: status === "BUILD" ? 0 : 100,
      "OS-EXT-AZ:availability_zone": s.availabilityZone ?? "nova",
      config_drive: "",
      key_name: s.keyName ?? null,
      "OS-SRV-USG:launched_at": status === "BUILD" ? null : isoSeconds(created).replace(/Z$/, ".000000"),
      "OS-SRV-USG:terminated_at": null,
      "OS-EXT-STS:task_state": status === "BUILD" ? "spawning" : null,
      "OS-EXT-STS:vm_state": vmState,
      "OS-EXT-STS:power_state": power,
      "os-extended-volumes:volumes_attached": [],
      security_groups: [{ name: "default" }],
    };
    if (this.token.admin) {
      out["OS-EXT-SRV-ATTR:host"] = s.host ?? null;
      out["OS-EXT-SRV-ATTR:hypervisor_hostname"] = s.host ?? null;
      out["OS-EXT-SRV-ATTR:instance_name"] = `instance-${s.id.slice(0, 8)}`;
    }
    if (at(v, 9)) out.locked = s.locked ?? false;
    if (at(v, 19)) out.description = s.description ?? null;
    if (at(v, 26)) out.tags = s.tags ?? [];
    if (at(v, 73)) out.locked_reason = null;
    return out;
  }
}
