/**
 * The route table of the all-in-one server: the first route whose path
 * matches answers, anything else is a JSON 404; `http.headers` are added to
 * every response. `http.prefix` moves every path but `/` under it. Read-only
 * mode (`storage.maintenance.readonly`) is enforced here, for every route
 * that says which of its requests change repositories or blobs (see
 * {@link Route.changes}).
 *
 * @module
 */
import { readsRequestBasics } from "../../runtime/adapter-capabilities.js";
import { errorResponse } from "../../oci/errors.js";
import type { AllInOneConfig } from "../config/config-types.js";

/**
 * `config` with the paths of the token service, the users API (and its
 * administration routes) and the web page under `http.prefix` (its trailing
 * slashes dropped), as every route of Distribution is under it; unchanged
 * without a prefix.
 */
export function underPrefix(config: AllInOneConfig): AllInOneConfig {
  const prefix = (config.http.prefix ?? "").replace(/\/+$/, "");
  if (prefix === "") return config;
  return {
    ...config,
    http: { ...config.http, prefix },
    ...(config.tokenService ? { tokenService: { ...config.tokenService, path: prefix + config.tokenService.path } } : {}),
    ...(config.users ? { users: { ...config.users, prefix: prefix + config.users.prefix } } : {}),
    ...(config.ui ? { ui: { ...config.ui, prefix: prefix + config.ui.prefix } } : {}),
  };
}

/**
 * `/` answers 200 with no body, whatever the prefix, as Distribution's
 * liveness route does (load balancers and the registry Helm chart probe it);
 * 503 like every path while the health checks fail.
 */
export const aliveRoute: Route = {
  matches: (path) => path === "/",
  handler: async () => new Response(null, { status: 200, headers: { "cache-control": "no-cache" } }),
};

/** One service of the all-in-one server and the paths it owns. */
export interface Route {
  /** Whether this route owns `path` (the URL's pathname). */
  matches: (path: string) => boolean;
  /** The service's fetch handler. */
  handler: (request: Request) => Promise<Response>;
  /**
   * Whether `request` would change repositories, tags, manifests, blobs or
   * uploads: in read-only mode the route table answers it with 405 before
   * the handler runs. Absent: the route changes none (the registry's own
   * `/v2/` route refuses its writes itself, after authorization, as
   * Distribution; `createRegistry({ readOnly })`).
   */
  changes?: (request: Request) => boolean;
}

/** A route owning `path` exactly, `path/`, or (with `subpaths`) everything under `path/`. */
export function pathRoute(path: string, handler: Route["handler"], subpaths: boolean): Route {
  return {
    matches: subpaths ? (p) => p === path || p.startsWith(`${path}/`) : (p) => p === path || p === `${path}/`,
    handler,
  };
}

const NOT_FOUND = JSON.stringify({ errors: [{ code: "NOT_FOUND", message: "no such route", detail: null }] });

/** What {@link routeHandler} adds to the routes. */
export interface RouteTableOptions {
  /** Read-only mode: a request a route says {@link Route.changes} gets 405 `UNSUPPORTED`. */
  readOnly?: boolean;
  /** The `Strict-Transport-Security` of every https response (`registrykit.hsts`). */
  hsts?: string;
}

/**
 * One handler over `routes`, adding `extraHeaders` to every response; with
 * `readOnly`, a request a route says {@link Route.changes} gets 405
 * `UNSUPPORTED` (the registry's own answer to a write in read-only mode).
 */
export function routeHandler(routes: readonly Route[], extraHeaders: readonly [string, string][], options: RouteTableOptions = {}): (request: Request) => Promise<Response> {
  const { readOnly = false, hsts } = options;
  const overTls: readonly [string, string][] = hsts ? [...extraHeaders, ["strict-transport-security", hsts]] : extraHeaders;
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = url.pathname;
    // Browsers heed HSTS only over https (RFC 6797 §8.1), so it goes only there.
    const extra = url.protocol === "https:" ? overTls : extraHeaders;
    const route = routes.find((r) => r.matches(path));
    const response = !route
      ? new Response(NOT_FOUND, { status: 404, headers: { "content-type": "application/json; charset=utf-8" } })
      : readOnly && route.changes?.(request)
        // The Allow of a route whose only methods write: none (RFC 9110 §10.2.1), as the registry's upload routes answer.
        ? errorResponse("UNSUPPORTED", "the registry is in read-only mode", { status: 405, headers: { allow: "" }, request })
        : await route.handler(request);
    return extra.length > 0 ? withHeaders(response, extra) : response;
  };
  // Every route is registry-kit's own and reads only the basics of a request.
  readsRequestBasics(handler);
  return handler;
}

/** `http.headers` are added to every response, unless the handler set the header itself. */
function withHeaders(response: Response, extra: readonly [string, string][]): Response {
  const headers = new Headers(response.headers);
  const own = new Set([...response.headers.keys()]);
  for (const [name, value] of extra) if (!own.has(name.toLowerCase())) headers.append(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
