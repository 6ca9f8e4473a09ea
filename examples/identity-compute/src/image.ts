/**
 * The image service of the example: just enough of a glance-compatible
 * Image API v2 for the `openstack` client to show image names next to
 * servers — version discovery and reading images.
 *
 * Routes, below the service root (`root`, default `/`):
 *
 * | Route | What |
 * |---|---|
 * | `GET /`, `GET /versions` | glance's `{"versions":[…]}` (no token needed) |
 * | `GET /v2` | `{"version":{…}}` (no token needed) |
 * | `GET /v2/images` | `{"images":[…],"first":…,"schema":…}` (`limit`, `marker`, `name`, `status`, `visibility`) |
 * | `GET /v2/images/{id}` | one image |
 *
 * API routes need `X-Auth-Token` (401 otherwise). Any token, scoped or not,
 * sees public images; a project-scoped token also sees its project's private ones.
 *
 * @module
 */
import type { LogHook } from "registry-kit";
import { silent } from "./http.js";
import { json } from "./http.js";
import { checkToken, type TokenValidator } from "./auth.js";
import { keystoneError } from "./errors.js";
import type { TokenRecord } from "./tokens.js";
import { baseUrl, isoSeconds, normaliseRoot, pathBelow, type Handler } from "./util.js";
import { imageVersionResponse, imageVersionsResponse } from "./versions.js";

/** An image the service lists. */
export interface ImageRecord {
  /** A UUID. */
  id: string;
  name: string;
  /** Default `public`. */
  visibility?: "public" | "private" | "shared" | "community";
  /** The owning project; needed for `private`. */
  owner?: string;
  /** Bytes. */
  size?: number;
  diskFormat?: string;
  containerFormat?: string;
  /** Milliseconds since the epoch. */
  created?: number;
}

/** Options of {@link createImageService}. */
export interface ImageServiceOptions {
  /** Checks `X-Auth-Token`; pass `identity.validateToken`. */
  validateToken: TokenValidator;
  /** The images. Default: none. */
  images?: readonly ImageRecord[];
  /** Path the service is mounted at; the API is at `${root}/v2`. Default `/`. */
  root?: string;
  /** Absolute URL of the service root for links (default: the request's origin + `root`). */
  publicUrl?: string;
  /** The identity API URL (ending in `/v3`) for `WWW-Authenticate` on 401. */
  identityUrl?: string;
  /** Structured log; never given token strings. */
  log?: LogHook;
}

/** Create the image service. */
export function createImageService(options: ImageServiceOptions): Handler {
  const root = normaliseRoot(options.root);
  const images = options.images ?? [];
  const log = options.log ?? silent;
  const started = Date.now();

  return async (request) => {
    const url = new URL(request.url);
    const path = pathBelow(url, root);
    if (path === undefined) return keystoneError(404, "The resource could not be found.");
    const base = baseUrl(request, root, options.publicUrl);
    const read = request.method === "GET" || request.method === "HEAD";
    const strip = (r: Response) => (request.method === "HEAD" ? new Response(null, { status: r.status, headers: r.headers }) : r);

    if (path === "/" || path === "/versions" || path === "/v2") {
      if (!read) return keystoneError(405, "The method is not allowed for the requested URL.", { allow: "GET, HEAD" });
      if (path === "/v2") return strip(imageVersionResponse(base));
      return strip(imageVersionsResponse(base, path === "/" ? 300 : 200));
    }
    if (!path.startsWith("/v2/")) return keystoneError(404, "The resource could not be found.");

    const auth = await checkToken(request, options.validateToken, options.identityUrl);
    if ("response" in auth) {
      log({ level: "warn", msg: "image request refused", status: 401, reason: auth.reason });
      return strip(auth.response);
    }
    if (!read) return keystoneError(405, "This example's image service is read-only.", { allow: "GET, HEAD" });
    const token = auth.record;
    const parts = path.split("/").filter(Boolean); // ["v2", "images", id?]
    const seen = images.filter((i) => canSee(i, token));

    if (parts[1] === "images" && parts.length === 2) {
      const q = url.searchParams;
      let list = seen;
      for (const [param, get] of [
        ["name", (i: ImageRecord) => i.name],
        ["status", () => "active"],
        ["visibility", (i: ImageRecord) => i.visibility ?? "public"],
      ] as const) {
        const want = q.get(param);
        if (want !== null) list = list.filter((i) => get(i) === want);
      }
      const marker = q.get("marker");
      if (marker !== null) {
        const at = list.findIndex((i) => i.id === marker);
        if (at < 0) return keystoneError(400, `marker ${marker.slice(0, 64)} could not be found.`);
        list = list.slice(at + 1);
      }
      let limit = 25;
      const limitText = q.get("limit");
      if (limitText !== null) {
        if (!/^\d{1,9}$/.test(limitText)) return keystoneError(400, "limit param must be an integer");
        limit = Math.min(Number(limitText), 1000);
      }
      const page = list.slice(0, limit);
      const body: Record<string, unknown> = {
        images: page.map((i) => render(i, base, started)),
        first: `${new URL(base).pathname.replace(/\/$/, "")}/v2/images`,
        schema: "/v2/schemas/images",
      };
      if (list.length > limit && page.length > 0) {
        const nq = new URLSearchParams(q);
        nq.set("marker", page[page.length - 1]!.id);
        body.next = `${new URL(base).pathname.replace(/\/$/, "")}/v2/images?${nq}`;
      }
      return strip(json(body));
    }
    if (parts[1] === "images" && parts.length === 3) {
      const image = seen.find((i) => i.id === parts[2]);
      if (!image) return strip(keystoneError(404, `No image found with ID ${parts[2]!.slice(0, 64)}`));
      return strip(json(render(image, base, started)));
    }
    return strip(keystoneError(404, "The resource could not be found."));
  };
}

function canSee(i: ImageRecord, token: TokenRecord): boolean {
  const visibility = i.visibility ?? "public";
  return visibility === "public" || visibility === "community" || token.admin || (token.project !== undefined && i.owner === token.project.id);
}

function render(i: ImageRecord, base: string, started: number) {
  const t = isoSeconds(i.created ?? started);
  const basePath = new URL(base).pathname.replace(/\/$/, "");
  return {
    id: i.id,
    name: i.name,
    status: "active",
    visibility: i.visibility ?? "public",
    owner: i.owner ?? null,
    size: i.size ?? null,
    virtual_size: null,
    disk_format: i.diskFormat ?? "qcow2",
    container_format: i.containerFormat ?? "bare",
    checksum: null,
    os_hash_algo: null,
    os_hash_value: null,
    min_disk: 0,
    min_ram: 0,
    protected: false,
    os_hidden: false,
    tags: [],
    created_at: t,
    updated_at: t,
    self: `${basePath}/v2/images/${i.id}`,
    file: `${basePath}/v2/images/${i.id}/file`,
    schema: "/v2/schemas/image",
  };
}
