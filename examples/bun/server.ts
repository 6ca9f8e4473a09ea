/**
 * registry-kit on Bun: the registry (`/v2/`), its token service (`/token`)
 * and the users API (`/api/users`) on one port with `Bun.serve`, blobs,
 * manifests and accounts on disk through the fs driver (Bun runs `node:fs`).
 *
 *   bun install && bun run start        # http://127.0.0.1:5000/v2/ (see README.md)
 *
 * Only public names of the package are imported.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { createTokenAuthorizer, createTokenService, defaultPolicy, generateSigningKeyPem, pemKeys, type KeyPem } from "registry-kit/auth";
import { createRegistry } from "registry-kit/registry";
import { fsStorage } from "registry-kit/storage/fs";
import { bootstrapAdmin, createUserService, storageUserStore, storeCredentialCheck } from "registry-kit/users";

const host = Bun.env.HOST ?? "127.0.0.1";
const port = Number(Bun.env.PORT ?? 5000);
const data = Bun.env.DATA_DIR ?? "./data";
const service = "registry-kit-bun";
const issuer = "registry-kit-bun token service";

/** A random secret as base64url text. */
function randomSecret(bytes = 24): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

/** The text of `file`, made by `create` (and kept, mode 0600) on the first start. */
async function keptSecret(file: string, create: () => Promise<string> | string): Promise<string> {
  const kept = Bun.file(file);
  if (await kept.exists()) return kept.text();
  const text = await create();
  // flag "wx": two processes starting at once must not both write it.
  await writeFile(file, text, { mode: 0o600, flag: "wx" });
  return text;
}

await mkdir(`${data}/keys`, { recursive: true, mode: 0o700 });
// The token signing key and its certificate: tokens stay valid across restarts.
const pem: KeyPem = JSON.parse(await keptSecret(`${data}/keys/token-key.json`, async () => JSON.stringify(await generateSigningKeyPem({ alg: "ES256" }))));
const keys = pemKeys(pem);
// Signs the upload state in Location URLs: keep it, or uploads in flight fail after a restart.
const uploadSecret = await keptSecret(`${data}/keys/upload-secret`, () => randomSecret());

const storage = fsStorage({ root: `${data}/storage` });
const users = storageUserStore(storage);
const adminPassword = Bun.env.ADMIN_PASSWORD ?? randomSecret(18);
if (await bootstrapAdmin(users, { username: "admin", password: adminPassword })) {
  console.log(Bun.env.ADMIN_PASSWORD ? "created the administrator admin" : `created the administrator admin, password: ${adminPassword}`);
}

// Administrators get everything; every signed-in user owns <username>/*.
const tokens = createTokenService({ issuer, service, keys, checkCredentials: storeCredentialCheck(users), policy: defaultPolicy() });
// Basic auth against the same accounts: users change their own password, administrators manage everyone.
const usersApi = createUserService({ store: users, prefix: "/api" });

let registry: ((request: Request) => Promise<Response>) | undefined;
const server = Bun.serve({
  hostname: host,
  port,
  // Bun refuses bodies over 128 MiB by default; a layer is often bigger.
  maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  // Seconds a connection may stay silent (Bun's default is 10; the largest value it takes is 255).
  idleTimeout: 255,
  fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/token") return tokens(request);
    if (path === "/api/users" || path.startsWith("/api/users/")) return usersApi(request);
    return registry!(request);
  },
});
// The token realm needs the address the server got (PORT=0 picks a free port). Set before
// this module's code ends, so before the first request.
const origin = Bun.env.PUBLIC_URL ?? `http://${server.hostname}:${server.port}`;
registry = createRegistry({ storage, uploadSecret, authorize: createTokenAuthorizer({ realm: `${origin}/token`, service, issuer, keys }) });
console.log(`listening ${origin} (registry /v2/, token /token, users /api/users)`);

for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.stop().then(() => process.exit(0)));
