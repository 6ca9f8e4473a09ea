// A consumer of the installed registry-kit tarball, as plain ESM JavaScript,
// run by Node, Bun and Deno from a project whose node_modules holds the
// package (test/interop/package-consumers.test.ts). It serves the registry and
// its token service on the runtime's own server (Deno.serve, Bun.serve,
// registry-kit/node's serve on Node), then pushes a small image with the
// package's client as the administrator, pulls it back into a fresh store and
// checks every digest, and checks that a wrong password is refused. The last
// line it prints is `RESULT <json>`.
import {
  bootstrapAdmin, createRegistry, createTokenAuthorizer, createTokenService, defaultPolicy, generatedKeys, memoryStorage,
  memoryUserStore, storeCredentialCheck,
} from "registry-kit";
import { RegistryClientError, createClient, memoryImageStore } from "registry-kit/client";

const runtime = globalThis.Deno ? `deno ${Deno.version.deno}` : globalThis.Bun ? `bun ${Bun.version}` : `node ${process.versions.node}`;
const service = "consumer.test";
const issuer = "consumer-issuer";
const password = "Admin-Secret-123";

const keys = generatedKeys({ alg: "ES256" });
const users = memoryUserStore();
await bootstrapAdmin(users, { username: "admin", password });
const tokens = createTokenService({ issuer, service, keys, checkCredentials: storeCredentialCheck(users), policy: defaultPolicy() });
let registry;
const handler = (request) => (new URL(request.url).pathname === "/token" ? tokens(request) : registry(request));

async function listen() {
  if (globalThis.Deno) {
    return new Promise((resolve) => {
      const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => resolve({ port, close: () => server.shutdown() }) }, handler);
    });
  }
  if (globalThis.Bun) {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler });
    return { port: server.port, close: () => server.stop(true) };
  }
  const { serve } = await import("registry-kit/node");
  const server = await serve(handler, { host: "127.0.0.1", port: 0 });
  return { port: server.port, close: () => server.close() };
}

const server = await listen();
const origin = `http://127.0.0.1:${server.port}`;
registry = createRegistry({ storage: memoryStorage(), authorize: createTokenAuthorizer({ realm: `${origin}/token`, service, issuer, keys }) });

const encoder = new TextEncoder();
const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (bytes) => `sha256:${hex(await crypto.subtle.digest("SHA-256", bytes))}`;
const streamOf = (bytes) => new Blob([bytes]).stream();

const challenge = await fetch(`${origin}/v2/`);
await challenge.arrayBuffer();

// A small image: a config, one layer, the manifest naming both.
const layer = encoder.encode(`a layer pushed from ${runtime}\n`.repeat(100));
const config = encoder.encode(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }));
const layerDigest = await sha256(layer);
const configDigest = await sha256(config);
const manifest = encoder.encode(JSON.stringify({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: configDigest, size: config.byteLength },
  layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layerDigest, size: layer.byteLength }],
}));
const manifestDigest = await sha256(manifest);
const local = memoryImageStore();
for (const [digest, bytes] of [[layerDigest, layer], [configDigest, config], [manifestDigest, manifest]]) await local.putBlob(digest, streamOf(bytes));
await local.setName("v1", { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: manifestDigest, size: manifest.byteLength });

const client = createClient();
await client.login(origin, "admin", password);
const ref = `127.0.0.1:${server.port}/admin/consumer:v1`;
const pushed = await client.push(ref, local, { name: "v1" });
const back = memoryImageStore();
const pulled = await client.pull(ref, back, { name: "v1" });
const pulledLayer = back.blobs.get(layerDigest);

let refused = "accepted";
const intruder = createClient();
try {
  // login asks the token service at once, so a wrong password fails here.
  await intruder.login(origin, "admin", "not-the-password");
  await intruder.push(`127.0.0.1:${server.port}/admin/other:v1`, local, { name: "v1" });
} catch (error) {
  refused = error instanceof RegistryClientError ? `${error.status} ${error.code}` : String(error);
}
await server.close();

console.log(`RESULT ${JSON.stringify({
  runtime,
  challenge: `${challenge.status} ${challenge.headers.get("www-authenticate")}`,
  manifestDigest,
  pushedDigest: pushed.digest,
  uploaded: pushed.uploaded.length,
  pulledDigest: pulled.manifest.digest,
  imageId: pulled.imageId,
  configDigest,
  layerBack: pulledLayer ? await sha256(pulledLayer) : null,
  layerDigest,
  refused,
})}`);
