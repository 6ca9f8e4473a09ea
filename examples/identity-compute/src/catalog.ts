/**
 * The service catalog: which services exist and at which URLs, per region
 * and interface. The identity service puts it into every project-scoped
 * token, and clients pick an endpoint by service type, region and interface
 * (a caller outside the deployment uses `public`).
 *
 * @module
 */
import { stableId } from "./util.js";

/** Which network an endpoint is meant for. */
export type EndpointInterface = "public" | "internal" | "admin";

/** The three interfaces, in the order keystone lists them. */
export const ENDPOINT_INTERFACES: readonly EndpointInterface[] = ["public", "internal", "admin"];

/** One endpoint of one service. */
export interface CatalogEndpoint {
  id: string;
  interface: EndpointInterface;
  /** The region id (keystone writes it both as `region` and `region_id`). */
  region: string;
  /** Absolute URL, e.g. `https://cloud.example/compute/v2.1`. */
  url: string;
  /** Disabled endpoints are kept in the catalog but never given to clients in tokens. */
  enabled: boolean;
}

/** One service and its endpoints. */
export interface CatalogService {
  id: string;
  /** The service type clients look for: `identity`, `compute`, `image`, ... */
  type: string;
  /** A display name: `keystone`, `nova`, `glance`, ... */
  name: string;
  enabled: boolean;
  endpoints: CatalogEndpoint[];
}

/** The whole catalog. */
export type Catalog = CatalogService[];

/** Input of {@link defineCatalog}: a service and its URL per interface. */
export interface ServiceDefinition {
  type: string;
  name: string;
  /** At least `public`. An interface left out has no endpoint. */
  urls: Partial<Record<EndpointInterface, string>> & { public: string };
  /** Default `true`. */
  enabled?: boolean;
}

/**
 * Build a {@link Catalog} with deterministic ids (derived from region, type
 * and interface) from a short description.
 *
 * @example
 * defineCatalog("RegionOne", [
 *   { type: "identity", name: "keystone", urls: { public: "http://127.0.0.1:5000/v3" } },
 *   { type: "compute", name: "nova", urls: { public: "http://127.0.0.1:5000/compute/v2.1" } },
 * ]);
 */
export function defineCatalog(region: string, services: readonly ServiceDefinition[]): Catalog {
  if (!region) throw new TypeError("a catalog needs a region");
  return services.map((s) => {
    if (!s.type || !s.name) throw new TypeError("every catalog service needs a type and a name");
    const endpoints: CatalogEndpoint[] = [];
    for (const iface of ENDPOINT_INTERFACES) {
      const url = s.urls[iface];
      if (url === undefined) continue;
      const parsed = new URL(url); // throws on a relative or malformed URL
      endpoints.push({
        id: stableId("endpoint", region, s.type, iface),
        interface: iface,
        region,
        url: parsed.href.replace(/\/+$/, ""),
        enabled: true,
      });
    }
    return { id: stableId("service", s.type), type: s.type, name: s.name, enabled: s.enabled ?? true, endpoints };
  });
}

/** One endpoint as it appears in a token's catalog. */
export interface TokenCatalogEndpoint {
  id: string;
  interface: EndpointInterface;
  region: string;
  region_id: string;
  url: string;
}

/** One service as it appears in a token's catalog. */
export interface TokenCatalogEntry {
  id: string;
  type: string;
  name: string;
  endpoints: TokenCatalogEndpoint[];
}

/**
 * The catalog in the shape keystone puts into a token body: enabled services
 * and endpoints only, each endpoint with `region` and `region_id`.
 */
export function tokenCatalog(catalog: Catalog): TokenCatalogEntry[] {
  return catalog
    .filter((s) => s.enabled)
    .map((s) => ({
      id: s.id,
      type: s.type,
      name: s.name,
      endpoints: s.endpoints
        .filter((e) => e.enabled)
        .map((e) => ({ id: e.id, interface: e.interface, region: e.region, region_id: e.region, url: e.url })),
    }));
}

/**
 * The URL of the endpoint of `type` for `iface` (and `region` when given), or
 * `undefined` — what a client does with the catalog.
 */
export function findEndpoint(
  catalog: Catalog,
  type: string,
  iface: EndpointInterface = "public",
  region?: string,
): string | undefined {
  for (const s of catalog) {
    if (!s.enabled || s.type !== type) continue;
    for (const e of s.endpoints) {
      if (e.enabled && e.interface === iface && (region === undefined || e.region === region)) return e.url;
    }
  }
  return undefined;
}
