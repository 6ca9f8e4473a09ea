// A CommonJS consumer of the installed registry-kit tarball, run by Node
// (test/interop/package-consumers.test.ts): every public subpath loads with
// require(), and a registry with token auth on registry-kit/node's serve takes
// a blob and a manifest pushed with plain fetch after a token request, and
// serves them back with the same digests. The last line it prints is
// `RESULT <json>`.
"use strict";
const { createHash } = require("node:crypto");
const pkg = require("registry-kit/package.json");

// Every subpath the package offers to require() (registry-kit/testing is import-only: vitest refuses require()).
const SUBPATHS = Object.keys(pkg.exports).filter((s) => typeof pkg.exports[s] === "object" && "require" in pkg.exports[s]).map((s) => (s === "." ? "registry-kit" : `registry-kit/${s.slice(2)}`));
const sha256 = (bytes) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function main() {
  const loaded = {};
  for (const id of SUBPATHS) loaded[id] = Object.keys(require(id)).sort();
  let testingRequire = "loaded";
  try { require("registry-kit/testing"); } catch (error) { testingRequire = error.code; }
  const { aclPolicy, createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } = require("registry-kit/auth");
  const { createRegistry } = require("registry-kit/registry");
  const { memoryStorage } = require("registry-kit/storage/memory");
  const { serve } = require("registry-kit/node");

  const service = "consumer.cjs";
  const issuer = "consumer-cjs-issuer";
  const keys = generatedKeys({ alg: "ES256" });
  const tokens = createTokenService({
    issuer, service, keys,
    checkCredentials: memoryCredentials({ carol: { password: "Carol-Secret-1" } }),
    policy: aclPolicy([{ match: { account: "carol", type: "repository", name: "carol/*" }, actions: ["*"] }]),
  });
  let registry;
  const server = await serve((request) => (new URL(request.url).pathname === "/token" ? tokens(request) : registry(request)), { host: "127.0.0.1", port: 0 });
  registry = createRegistry({ storage: memoryStorage(), authorize: createTokenAuthorizer({ realm: `${server.url}/token`, service, issuer, keys }) });

  const basic = `Basic ${Buffer.from("carol:Carol-Secret-1").toString("base64")}`;
  const tokenResponse = await fetch(`${server.url}/token?service=${service}&scope=repository:carol/cjs:pull,push`, { headers: { authorization: basic } });
  const { token } = await tokenResponse.json();
  const auth = { authorization: `Bearer ${token}` };

  const blob = Buffer.from("a blob pushed from CommonJS\n".repeat(50));
  const blobDigest = sha256(blob);
  const post = await fetch(`${server.url}/v2/carol/cjs/blobs/uploads/?digest=${blobDigest}`, { method: "POST", headers: { ...auth, "content-type": "application/octet-stream" }, body: blob });
  await post.arrayBuffer();
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.empty.v1+json", digest: blobDigest, size: blob.byteLength },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: blobDigest, size: blob.byteLength }],
  }));
  const put = await fetch(`${server.url}/v2/carol/cjs/manifests/v1`, { method: "PUT", headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" }, body: manifest });
  await put.arrayBuffer();
  const manifestBack = Buffer.from(await (await fetch(`${server.url}/v2/carol/cjs/manifests/v1`, { headers: { ...auth, accept: "application/vnd.oci.image.manifest.v1+json" } })).arrayBuffer());
  const blobBack = Buffer.from(await (await fetch(`${server.url}/v2/carol/cjs/blobs/${blobDigest}`, { headers: auth })).arrayBuffer());
  const anonymous = await fetch(`${server.url}/v2/carol/cjs/manifests/v1`);
  await anonymous.arrayBuffer();
  await server.close();

  console.log(`RESULT ${JSON.stringify({
    runtime: `node ${process.versions.node}`,
    loaded,
    testingRequire,
    token: tokenResponse.status,
    blobPush: `${post.status} ${post.headers.get("docker-content-digest")}`,
    manifestPut: `${put.status} ${put.headers.get("docker-content-digest")}`,
    blobDigest,
    manifestDigest: sha256(manifest),
    manifestBack: sha256(manifestBack),
    blobBack: sha256(blobBack),
    anonymous: anonymous.status,
  })}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
