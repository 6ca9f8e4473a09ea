/**
 * registry-kit on Deno: the registry (`/v2/`), its token service (`/token`)
 * and the users API (`/api/users`) on one port with `Deno.serve`, blobs,
 * manifests and accounts on disk through the fs driver (Deno runs `node:fs`).
 *
 *   npm install && deno task start      # http://127.0.0.1:5000/v2/ (see README.md)
 *
 * Only public names of the package are imported; `deno.json` maps them to the
 * installed npm package.
 */
import { createTokenAuthorizer, createTokenService, defaultPolicy, generateSigningKeyPem, pemKeys, type KeyPem } from "registry-kit/auth";
import { createRegistry } from "registry-kit/registry";
import { fsStorage } from "registry-kit/storage/fs";
import { bootstrapAdmin, createUserService, storageUserStore, storeCredentialCheck } from "registry-kit/users";

type Handler = (request: Request) => Promise<Response>;

const host = Deno.env.get("HOST") ?? "127.0.0.1";
const port = Number(Deno.env.get("PORT") ?? 5000);
const data = Deno.env.get("DATA_DIR") ?? "./data";
const service = "registry-kit-deno";
const issuer = "registry-kit-deno token service";

/** A random secret as base64url text. */
function randomSecret(bytes = 24): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** The text of `file`, made by `create` (and kept, mode 0600) on the first start. */
async function keptSecret(file: string, create: () => Promise<string> | string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const text = await create();
  // createNew: two processes starting at once must not both write it.
  await Deno.writeTextFile(file, text, { mode: 0o600, createNew: true });
  return text;
}

await Deno.mkdir(`${data}/keys`, { recursive: true, mode: 0o700 });
// The token signing key and its certificate: tokens stay valid across restarts.
const pem: KeyPem = JSON.parse(await keptSecret(`${data}/keys/token-key.json`, async () => JSON.stringify(await generateSigningKeyPem({ alg: "ES256" }))));
const keys = pemKeys(pem);
// Signs the upload state in Location URLs: keep it, or uploads in flight fail after a restart.
const uploadSecret = await keptSecret(`${data}/keys/upload-secret`, () => randomSecret());

const storage = fsStorage({ root: `${data}/storage` });
const users = storageUserStore(storage);
const adminPassword = Deno.env.get("ADMIN_PASSWORD") ?? randomSecret(18);
if (await bootstrapAdmin(users, { username: "admin", password: adminPassword })) {
  console.log(Deno.env.get("ADMIN_PASSWORD") ? "created the administrator admin" : `created the administrator admin, password: ${adminPassword}`);
}

// Administrators get everything; every signed-in user owns <username>/*.
const tokens = createTokenService({ issuer, service, keys, checkCredentials: storeCredentialCheck(users), policy: defaultPolicy() });
// Basic auth against the same accounts: users change their own password, administrators manage everyone.
const usersApi = createUserService({ store: users, prefix: "/api" });

// The token realm needs the address the server got (PORT=0 picks a free port).
const listening = Promise.withResolvers<string>();
const registry: Promise<Handler> = listening.promise.then((origin) =>
  createRegistry({ storage, uploadSecret, authorize: createTokenAuthorizer({ realm: `${origin}/token`, service, issuer, keys }) }),
);

const server = Deno.serve(
  {
    hostname: host,
    port,
    onListen: ({ hostname, port }) => {
      const origin = Deno.env.get("PUBLIC_URL") ?? `http://${hostname}:${port}`;
      listening.resolve(origin);
      console.log(`listening ${origin} (registry /v2/, token /token, users /api/users)`);
    },
  },
  async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/token") return tokens(request);
    if (path === "/api/users" || path.startsWith("/api/users/")) return usersApi(request);
    return (await registry)(request);
  },
);

for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => void server.shutdown().then(() => Deno.exit(0)));
