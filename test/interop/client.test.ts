/**
 * Issue 6 acceptance: registry-kit's fetch client against real servers and a
 * real peer client, on loopback.
 *
 * - The client pushes a hand-built OCI layout (read through `ociLayoutStore`)
 *   to registry-kit and to Debian's docker-registry (CNCF Distribution 2.8,
 *   protected by registry-kit's token service), and pulls it back
 *   byte-identical into a fresh layout.
 * - An image pushed by skopeo is pulled by the client; an image pushed by the
 *   client is read by skopeo (`inspect --raw` byte for byte, `copy` to an OCI
 *   layout with identical digests).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenAuthorizer } from "../../src/auth/index.js";
import { createClient, type RegistryClient } from "../../src/client/index.js";
import { ociLayoutStore } from "../../src/client/oci-layout.node.js";
import { startDistribution, type Distribution } from "./helpers/distribution.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { startTokenService, type TokenServiceFixture } from "./helpers/token-service.js";

const alice = { username: "alice", password: "alice-Secret-1" };

/** The bytes of every blob of `img` as stored in a pulled layout at `dir`. */
function blobBytes(dir: string, digest: string): Buffer {
  return readFileSync(join(dir, "blobs", "sha256", digest.slice("sha256:".length)));
}

describe("registry-kit client against registry-kit, Distribution 2.8 and skopeo", () => {
  let tokens: TokenServiceFixture;
  let reg: RegistryKit;
  let dist: Distribution;
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  const work = tempDir("client-interop");
  const id = randomBytes(3).toString("hex");

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    tokens = await startTokenService({
      users: { alice: { password: alice.password } },
      rules: [{ match: { account: "alice", type: "repository", name: "alice/*" }, actions: ["*"] }],
    });
    const trust = { realm: tokens.realm, service: tokens.service, issuer: tokens.issuer };
    reg = await startRegistryKit({
      authorize: createTokenAuthorizer({ ...trust, rootCertBundle: (await tokens.keys.exportPem()).certificate }),
    });
    dist = await startDistribution({ auth: { ...trust, rootcertbundle: tokens.rootCertBundle } });
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 300_000] });
  });
  afterAll(async () => {
    await dist?.stop();
    await reg?.close();
    await tokens?.close();
    skopeo?.remove();
    work.remove();
  });

  async function loggedIn(registry: string): Promise<RegistryClient> {
    const client = createClient();
    await client.login(registry, alice.username, alice.password);
    return client;
  }

  async function roundTrip(registryUrl: string, repo: string, chunkSize?: number) {
    const client = await loggedIn(registryUrl);
    const pushed = await client.push(`${registryUrl}/${repo}:v1`, ociLayoutStore(img.dir), { name: img.tag, chunkSize });
    expect(pushed.digest).toBe(img.manifestDigest);
    expect(pushed.uploaded.sort()).toEqual([...img.blobDigests].sort());

    const outDir = join(work.path, `pulled-${repo.replace(/\W/g, "_")}`);
    const puller = await loggedIn(registryUrl);
    const result = await puller.pull(`${registryUrl}/${repo}:v1`, ociLayoutStore(outDir), { name: "v1" });
    expect(result.manifest.digest).toBe(img.manifestDigest);
    expect(result.imageId).toBe(img.config.digest);
    expect(result.downloaded.sort()).toEqual([...img.blobDigests].sort());
    // Byte-identical: the manifest and every blob.
    expect(blobBytes(outDir, img.manifestDigest).equals(img.manifestBytes)).toBe(true);
    for (const layer of img.layers) expect(blobBytes(outDir, layer.digest).equals(layer.bytes)).toBe(true);
    expect(blobBytes(outDir, img.config.digest).equals(img.config.bytes)).toBe(true);
    // The pulled layout is a valid OCI layout that skopeo reads back.
    const read = readOciLayout(outDir, "v1");
    expect(read.manifestDigest).toBe(img.manifestDigest);
    return outDir;
  }

  it("pushes to registry-kit (token flow) and pulls back byte-identical", async () => {
    await roundTrip(reg.url, `alice/client-${id}`);
  });

  it("pushes to registry-kit in chunks and pulls back byte-identical", async () => {
    await roundTrip(reg.url, `alice/client-chunked-${id}`, 64 * 1024);
    const patches = reg.recorder.requests.filter((r) => r.method === "PATCH" && r.path.includes(`alice/client-chunked-${id}`));
    expect(patches.length).toBeGreaterThanOrEqual(5); // 300 000 bytes in 64 KiB chunks
  });

  it("pushes to Distribution 2.8 with registry-kit tokens and pulls back byte-identical", async () => {
    await roundTrip(dist.url, `alice/client-dist-${id}`);
    expect(tokens.issued.some((t) => t.status === 200 && t.claims?.access.some((a) => a.name === `alice/client-dist-${id}`))).toBe(true);
  });

  it("pulls an image that skopeo pushed", async () => {
    const repo = `alice/from-skopeo-${id}`;
    const push = await skopeo.copy(img.ref, `docker://${reg.host}/${repo}:v1`, { destCreds: alice });
    expect(push.code, describeRun(push)).toBe(0);
    const outDir = join(work.path, "from-skopeo");
    const client = await loggedIn(reg.url);
    const pulled = await client.pull(`${reg.url}/${repo}:v1`, ociLayoutStore(outDir), { name: "v1" });
    expect(pulled.manifest.digest).toBe(img.manifestDigest);
    for (const digest of img.blobDigests) expect(blobBytes(outDir, digest).length).toBeGreaterThan(0);
    expect(blobBytes(outDir, img.manifestDigest).equals(img.manifestBytes)).toBe(true);
  });

  it("skopeo reads an image the client pushed: inspect --raw byte for byte, copy with identical digests", async () => {
    const repo = `alice/to-skopeo-${id}`;
    const client = await loggedIn(reg.url);
    await client.push(`${reg.url}/${repo}:v1`, ociLayoutStore(img.dir), { name: img.tag });
    const raw = await skopeo.inspectRaw(`docker://${reg.host}/${repo}:v1`, { creds: alice });
    expect(raw.equals(img.manifestBytes)).toBe(true);
    const outDir = join(work.path, "to-skopeo");
    const copy = await skopeo.copy(`docker://${reg.host}/${repo}:v1`, `oci:${outDir}:v1`, { srcCreds: alice });
    expect(copy.code, describeRun(copy)).toBe(0);
    const read = readOciLayout(outDir, "v1");
    expect(read.manifestDigest).toBe(img.manifestDigest);
  });
});
