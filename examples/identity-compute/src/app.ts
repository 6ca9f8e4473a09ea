/**
 * The three services of the example composed on one origin:
 *
 * | Path | Service | Catalog type |
 * |---|---|---|
 * | `/v3`, `/` | identity | `identity` |
 * | `/compute/v2.1`, `/compute/` | compute | `compute` |
 * | `/image/v2`, `/image/` | image | `image` |
 *
 * plus the demo data (one project, a few servers, flavors and one image).
 * Runtime-neutral: the Node entry point is `../server.ts`.
 *
 * @module
 */
import type { CredentialCheck } from "registry-kit/auth";
import type { LogHook } from "registry-kit";
import { defineCatalog, type Catalog } from "./catalog.js";
import { createComputeService, DEFAULT_FLAVORS, type ServerRecord } from "./compute.js";
import { createIdentityService, type IdentityService, type ProjectDefinition } from "./identity.js";
import { createImageService, type ImageRecord } from "./image.js";
import { stableId, type Handler } from "./util.js";

/** Options of {@link createExampleApp}. */
export interface ExampleAppOptions {
  /** The public origin, e.g. `http://127.0.0.1:5000`; the catalog URLs are built from it. */
  origin: string;
  /** Checks user name and password (e.g. `storeCredentialCheck(store)`). */
  checkCredentials: CredentialCheck;
  /** Default: {@link DEMO_PROJECTS}. */
  projects?: readonly ProjectDefinition[];
  /** Default: {@link demoServers} for the first project. */
  servers?: readonly ServerRecord[];
  /** Default: {@link DEMO_IMAGES}. */
  images?: readonly ImageRecord[];
  /** Region of every endpoint. Default `RegionOne`. */
  region?: string;
  /** Token lifetime in seconds. Default 3600. */
  tokenTtlSeconds?: number;
  log?: LogHook;
}

/** The composed example. */
export interface ExampleApp {
  /** One handler for the whole origin. */
  handler: Handler;
  identity: IdentityService;
  compute: Handler;
  image: Handler;
  catalog: Catalog;
  /** The project the demo servers belong to. */
  project: { id: string; name: string };
  servers: readonly ServerRecord[];
}

/** The demo project: every authenticated user may scope to it. */
export const DEMO_PROJECTS: readonly ProjectDefinition[] = [{ name: "demo", members: "*" }];

/** The demo image. */
export const DEMO_IMAGES: readonly ImageRecord[] = [
  { id: "6f1c1b5e-3e1c-4a0b-9a5f-0c6b3c1d2e01", name: "cirros-0.6.2-x86_64", size: 21430272, created: Date.UTC(2024, 0, 2) },
];

/** A few servers in `projectId`, with fixed UUIDs. */
export function demoServers(projectId: string): ServerRecord[] {
  const image = DEMO_IMAGES[0]!.id;
  return [
    {
      id: "0b6e8a52-6f3c-4d6e-9c1a-5a4f2b7d9e10",
      name: "web-1",
      projectId,
      host: "compute-1",
      status: "ACTIVE",
      flavorId: "2",
      imageId: image,
      created: Date.UTC(2024, 4, 1, 9, 0, 0),
      addresses: { private: [{ addr: "10.0.0.11", version: 4 }] },
      metadata: { role: "web" },
    },
    {
      id: "5d2c7f3a-1b8e-4f0d-a6c9-3e7b1d4a8f21",
      name: "web-2",
      projectId,
      host: "compute-1",
      status: "ACTIVE",
      flavorId: "2",
      imageId: image,
      created: Date.UTC(2024, 4, 1, 9, 5, 0),
      addresses: { private: [{ addr: "10.0.0.12", version: 4 }] },
      metadata: { role: "web" },
    },
    {
      id: "9a4f1e6b-2c7d-4b3a-8e5f-6d1c0b9a7e32",
      name: "db-1",
      projectId,
      host: "compute-2",
      status: "SHUTOFF",
      flavorId: "3",
      created: Date.UTC(2024, 4, 2, 14, 30, 0),
      addresses: { private: [{ addr: "10.0.0.21", version: 4 }, { addr: "fd00::21", version: 6 }] },
      metadata: {},
    },
  ];
}

/** Compose identity, compute and image on one origin. */
export function createExampleApp(options: ExampleAppOptions): ExampleApp {
  const origin = new URL(options.origin).origin;
  const region = options.region ?? "RegionOne";
  const projects = options.projects ?? DEMO_PROJECTS;
  const first = projects[0];
  if (!first) throw new TypeError("the example needs at least one project");
  const project = { id: first.id ?? stableId("project", "default", first.name), name: first.name };
  const servers = options.servers ?? demoServers(project.id);
  const identityUrl = `${origin}/v3`;

  const catalog = defineCatalog(region, [
    { type: "identity", name: "keystone", urls: { public: identityUrl, internal: identityUrl, admin: identityUrl } },
    {
      type: "compute",
      name: "nova",
      urls: { public: `${origin}/compute/v2.1`, internal: `${origin}/compute/v2.1`, admin: `${origin}/compute/v2.1` },
    },
    { type: "image", name: "glance", urls: { public: `${origin}/image`, internal: `${origin}/image`, admin: `${origin}/image` } },
  ]);

  const identity = createIdentityService({
    checkCredentials: options.checkCredentials,
    catalog,
    projects,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    publicUrl: origin,
    log: options.log,
  });
  const compute = createComputeService({
    validateToken: identity.validateToken,
    servers,
    flavors: DEFAULT_FLAVORS,
    root: "/compute",
    publicUrl: `${origin}/compute`,
    identityUrl,
    log: options.log,
  });
  const image = createImageService({
    validateToken: identity.validateToken,
    images: options.images ?? DEMO_IMAGES,
    root: "/image",
    publicUrl: `${origin}/image`,
    identityUrl,
    log: options.log,
  });

  const under = (path: string, prefix: string) => path === prefix || path.startsWith(prefix + "/");
  const handler: Handler = async (request) => {
    const path = new URL(request.url).pathname;
    if (under(path, "/compute")) return compute(request);
    if (under(path, "/image")) return image(request);
    return identity(request);
  };
  return { handler, identity, compute, image, catalog, project, servers };
}
