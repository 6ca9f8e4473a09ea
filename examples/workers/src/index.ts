/**
 * registry-kit on Cloudflare Workers: the registry under `/v2/`, its token
 * service at `/token` and the users API under `/api/users`, all kept in one
 * R2 bucket (blobs, manifests, uploads in progress, user accounts). Only the
 * package's public names; wrangler bundles it (`npx wrangler deploy`).
 *
 * Settings (wrangler.toml `[vars]`, secrets with `npx wrangler secret put`):
 * - `BUCKET`: the R2 bucket binding.
 * - `SIGNING_KEY` (secret): the PEM private key that signs tokens (EC P-256,
 *   SEC1 or PKCS#8). Every isolate must sign with the same key, so it is set
 *   once rather than generated.
 * - `UPLOAD_SECRET` (secret): signs the upload `_state`, so that any isolate
 *   continues any upload.
 * - `ADMIN_PASSWORD` (secret): the password of the first administrator,
 *   `ADMIN_USERNAME` (default `admin`), created while the bucket has no users.
 * - `PUBLIC_REPOSITORIES`: comma-separated globs anyone may pull.
 */
import { createTokenAuthorizer, createTokenService, defaultPolicy, pemKeys } from "registry-kit/auth";
import { createRegistry } from "registry-kit/registry";
import { r2Storage, type R2BucketLike } from "registry-kit/storage/r2";
import { bootstrapAdmin, createUserService, storageUserStore, storeCredentialCheck } from "registry-kit/users";

/** The Worker's bindings. */
export interface Env {
  BUCKET: R2BucketLike;
  SIGNING_KEY?: string;
  UPLOAD_SECRET?: string;
  ADMIN_USERNAME?: string;
  ADMIN_PASSWORD?: string;
  PUBLIC_REPOSITORIES?: string;
}

type Handler = (request: Request) => Promise<Response>;
interface App {
  registry: Handler;
  tokens: Handler;
  users: Handler;
}

const SERVICE = "registry-kit-workers";
const ISSUER = "registry-kit-workers";

let app: Promise<App> | undefined;

/**
 * Build the services for this isolate, once. Not at module scope: workerd
 * refuses random values and timers there. The realm is the first request's
 * origin, since a Worker does not know its own address.
 */
async function build(env: Env, origin: string): Promise<App> {
  for (const name of ["SIGNING_KEY", "UPLOAD_SECRET"] as const) {
    if (!env[name]) throw new Error(`the ${name} secret is not set: see examples/workers/README.md`);
  }
  const storage = r2Storage({ bucket: env.BUCKET });
  const keys = pemKeys({ privateKey: env.SIGNING_KEY! });
  const store = storageUserStore(storage);
  if (env.ADMIN_PASSWORD) await bootstrapAdmin(store, { username: env.ADMIN_USERNAME ?? "admin", password: env.ADMIN_PASSWORD });
  const publicRepositories = (env.PUBLIC_REPOSITORIES ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const log = (event: unknown): void => console.log(JSON.stringify(event));
  return {
    registry: createRegistry({
      storage,
      uploadSecret: env.UPLOAD_SECRET!,
      authorize: createTokenAuthorizer({ realm: `${origin}/token`, service: SERVICE, issuer: ISSUER, keys }),
      log,
    }),
    tokens: createTokenService({
      issuer: ISSUER,
      service: SERVICE,
      keys,
      checkCredentials: storeCredentialCheck(store),
      policy: defaultPolicy({ publicRepositories }),
      log,
    }),
    users: createUserService({ store, prefix: "/api", log }),
  };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    let services: App;
    try {
      services = await (app ??= build(env, url.origin));
    } catch (error) {
      app = undefined;
      console.error(error);
      return new Response("registry-kit is not configured; see the Worker's log\n", { status: 503 });
    }
    if (url.pathname === "/token") return services.tokens(request);
    if (url.pathname === "/api/users" || url.pathname.startsWith("/api/users/")) return services.users(request);
    if (url.pathname === "/v2" || url.pathname.startsWith("/v2/")) return services.registry(request);
    return new Response("not found\n", { status: 404 });
  },
};
