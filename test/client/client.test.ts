/**
 * The client against registry-kit's own handlers, served by msw behind real
 * URLs (registry, token realm) so the client runs its real fetch path and
 * nothing listens on a port.
 */
import { http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import { createClient, memoryCredentialStore, memoryImageStore, RegistryClientError, type Descriptor, type LocalImageStore } from "../../src/client/index.js";
import { digestOf } from "../../src/client/verify.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

const REGISTRY = "http://registry.test";
const REALM = "http://auth.test/token";
const SERVICE = "registry.test";
const ISSUER = "auth.test";

/** Every request msw saw, for assertions on what the client sent. */
let seen: { method: string; url: URL; authorization: string | null }[] = [];
/** Per-test hook to fail or alter a registry request. */
let intercept: ((request: Request, forward: () => Promise<Response>) => Promise<Response>) | undefined;
/** The registry's and token service's clock offset, to expire tokens mid-push. */
let clockOffset = 0;
const now = () => Date.now() + clockOffset;

const keys = generatedKeys();
const users = memoryCredentials({
  alice: { password: "Alice-pass-1" },
  puller: { password: "Puller-pass-1" },
});
const tokenService = createTokenService({
  issuer: ISSUER,
  service: SERVICE,
  keys,
  checkCredentials: users,
  publicRepositories: ["public/*"],
  now,
});
const storage = memoryStorage();
let registry: (request: Request) => Promise<Response>;

const server = setupServer(
  http.all(`${REGISTRY}/*`, async ({ request }) => {
    seen.push({ method: request.method, url: new URL(request.url), authorization: request.headers.get("authorization") });
    const forward = () => registry(request);
    return intercept ? intercept(request, forward) : forward();
  }),
  http.get(REALM, async ({ request }) => {
    seen.push({ method: "GET", url: new URL(request.url), authorization: request.headers.get("authorization") });
    return tokenService(request);
  }),
);

beforeAll(async () => {
  const pem = await keys.exportPem();
  registry = createRegistry({
    storage,
    authorize: createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, rootCertBundle: pem.certificate, now }),
    uploadSecret: "client-test-secret-client-test-secret",
  });
  server.listen({ onUnhandledRequest: "error" });
});
afterAll(() => server.close());
beforeEach(() => {
  seen = [];
  intercept = undefined;
  clockOffset = 0;
});
afterEach(() => server.resetHandlers());

/** A small image in a local store: `layers` random layers, a config, a manifest named `name`. */
async function makeImage(store: LocalImageStore, name: string, layerSizes: number[]): Promise<{ manifest: Descriptor; blobs: Descriptor[] }> {
  const blobs: Descriptor[] = [];
  const put = async (bytes: Uint8Array, mediaType: string): Promise<Descriptor> => {
    const digest = digestOf(bytes);
    await store.putBlob(digest, new Response(bytes as Uint8Array<ArrayBuffer>).body!);
    return { mediaType, digest, size: bytes.byteLength };
  };
  const layers: Descriptor[] = [];
  for (const size of layerSizes) {
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
    layers.push(await put(bytes, "application/vnd.oci.image.layer.v1.tar+gzip"));
  }
  const config = await put(
    new TextEncoder().encode(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: layers.map((l) => l.digest) }, name })),
    "application/vnd.oci.image.config.v1+json",
  );
  blobs.push(config, ...layers);
  const manifestBytes = new TextEncoder().encode(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config, layers }));
  const manifest = await put(manifestBytes, "application/vnd.oci.image.manifest.v1+json");
  await store.setName(name, manifest);
  return { manifest, blobs };
}

function tokenRequests() {
  return seen.filter((s) => s.url.origin === "http://auth.test");
}
function registryRequests(method?: string) {
  return seen.filter((s) => s.url.origin === REGISTRY && (!method || s.method === method));
}

describe("client against registry-kit (token flow via msw)", () => {
  it("pushes with a stored login and pulls back byte-identical", async () => {
    const credentials = memoryCredentialStore();
    const client = createClient({ credentials });
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    expect(await credentials.get("registry.test")).toBe(btoa("alice:Alice-pass-1"));

    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [3000, 70_000]);
    const pushed = await client.push(`${REGISTRY}/alice/app:v1`, local);
    expect(pushed.digest).toBe(image.manifest.digest);
    expect(pushed.uploaded.sort()).toEqual(image.blobs.map((b) => b.digest).sort());

    // The stored login went to the token endpoint as Basic, with account=alice.
    const tokens = tokenRequests();
    expect(tokens.length).toBeGreaterThan(0);
    for (const t of tokens) {
      expect(t.authorization).toBe(`Basic ${btoa("alice:Alice-pass-1")}`);
      expect(t.url.searchParams.get("account")).toBe("alice");
      expect(t.url.searchParams.get("service")).toBe(SERVICE);
    }
    expect(tokens.some((t) => t.url.searchParams.getAll("scope").includes("repository:alice/app:pull,push"))).toBe(true);
    // The upload itself carried a token up front: no blob body was sent twice.
    expect(registryRequests("PUT").filter((r) => r.url.pathname.includes("/blobs/uploads/")).every((r) => r.authorization?.startsWith("Bearer "))).toBe(true);

    const back = memoryImageStore();
    const pulled = await client.pull(`${REGISTRY}/alice/app:v1`, back);
    expect(pulled.manifest.digest).toBe(image.manifest.digest);
    expect(pulled.imageId).toBe(image.blobs[0]!.digest);
    // Byte-identical: what came back hashes to the digest it was pushed under (a deep toEqual of
    // large byte arrays takes seconds).
    for (const blob of [...image.blobs, image.manifest]) expect(digestOf(back.blobs.get(blob.digest)!), blob.digest).toBe(blob.digest);
  });

  it("an anonymous client is refused a private repository, and sends no credentials", async () => {
    const alice = createClient();
    await alice.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    await makeImage(local, "v1", [1000]);
    await alice.push(`${REGISTRY}/alice/private:v1`, local);

    const anonymous = createClient();
    const err = await anonymous.pull(`${REGISTRY}/alice/private:v1`, memoryImageStore()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryClientError);
    expect((err as RegistryClientError).status).toBe(401);
    expect((err as RegistryClientError).code).toBe("UNAUTHORIZED");
    // No Basic credentials were sent by the anonymous client.
    expect(tokenRequests().slice(-1)[0]!.authorization).toBeNull();
  });

  it("anonymous pull of a public repository works", async () => {
    // Seed public/hello directly through the handler (no auth in front of this one).
    const open = createRegistry({ storage, uploadSecret: "client-test-secret-client-test-secret" });
    const seedClient = createClient({ fetch: async (input, init) => open(new Request(input as string | URL, init)) });
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [2048]);
    await seedClient.push(`${REGISTRY}/public/hello:v1`, local);

    const anonymous = createClient();
    const pulled = await anonymous.pull(`${REGISTRY}/public/hello:v1`, memoryImageStore());
    expect(pulled.manifest.digest).toBe(image.manifest.digest);
    expect(tokenRequests().every((t) => t.authorization === null)).toBe(true);
  });

  it("a wrong password fails login with the token endpoint's message and keeps no login", async () => {
    const credentials = memoryCredentialStore();
    const client = createClient({ credentials });
    const err = await client.login(REGISTRY, "alice", "wrong").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryClientError);
    expect((err as RegistryClientError).status).toBe(401);
    expect(await credentials.get("registry.test")).toBeUndefined();
  });

  it("insufficient scope: a user pushing outside their namespace gets a typed UNAUTHORIZED error", async () => {
    const client = createClient();
    await client.login(REGISTRY, "puller", "Puller-pass-1");
    const local = memoryImageStore();
    await makeImage(local, "v1", [100]);
    const err = await client.push(`${REGISTRY}/alice/app:v1`, local).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryClientError);
    expect((err as RegistryClientError).status).toBe(401);
    expect((err as RegistryClientError).code).toBe("UNAUTHORIZED");
    // The registry's challenge said why; the client keeps it in the message.
    expect((err as RegistryClientError).message).toContain("insufficient_scope");
  });

  it("renews a token that expires in the middle of a push and retries the request", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [5000, 6000, 7000]);
    // After the first blob upload completes, jump the server clocks 10 minutes ahead:
    // the cached token is now expired for the registry, though the client thinks it is fine.
    let jumped = false;
    intercept = async (request, forward) => {
      const response = await forward();
      if (!jumped && request.method === "PUT" && new URL(request.url).pathname.includes("/blobs/uploads/") && response.status === 201) {
        jumped = true;
        clockOffset = 600_000;
      }
      return response;
    };
    const pushed = await client.push(`${REGISTRY}/alice/expiring:v1`, local);
    expect(jumped).toBe(true);
    expect(pushed.uploaded.length).toBe(image.blobs.length);
    // One 401 from the registry after the jump, then a second token request for the same scope.
    const pushTokens = tokenRequests().filter((t) => t.url.searchParams.getAll("scope").includes("repository:alice/expiring:pull,push"));
    expect(pushTokens.length).toBe(2);
    const back = await client.pull(`${REGISTRY}/alice/expiring:v1`, memoryImageStore());
    expect(back.manifest.digest).toBe(image.manifest.digest);
  });

  it("chunked upload resumes from the server's Range after a failed chunk (lost before and after the server)", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [300_000]);
    let patches = 0;
    intercept = async (request, forward) => {
      if (request.method !== "PATCH") return forward();
      patches++;
      if (patches === 2) throw new TypeError("connection reset before the server"); // chunk never arrived
      if (patches === 4) {
        await forward(); // the server stored the chunk, but the answer was lost
        throw new TypeError("connection reset after the server");
      }
      return forward();
    };
    const pushed = await client.push(`${REGISTRY}/alice/chunky:v1`, local, { chunkSize: 64 * 1024 });
    expect(pushed.uploaded).toContain(image.blobs[1]!.digest);
    const statusChecks = registryRequests("GET").filter((r) => r.url.pathname.includes("/blobs/uploads/"));
    expect(statusChecks.length).toBe(2);
    const back = memoryImageStore();
    await client.pull(`${REGISTRY}/alice/chunky:v1`, back);
    expect(digestOf(back.blobs.get(image.blobs[1]!.digest)!)).toBe(image.blobs[1]!.digest);
  });

  it("skips layers already present: on push (HEAD) and on pull (image id present)", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [4000, 4000]);
    await client.push(`${REGISTRY}/alice/twice:v1`, local);
    seen = [];
    const again = await client.push(`${REGISTRY}/alice/twice:v2`, local, { name: "v1" });
    expect(again.uploaded).toEqual([]);
    expect(again.skipped.sort()).toEqual(image.blobs.map((b) => b.digest).sort());
    expect(registryRequests("POST")).toEqual([]);

    // Pull into the store that already has everything: no blob is downloaded.
    seen = [];
    const pulled = await client.pull(`${REGISTRY}/alice/twice:v2`, local);
    expect(pulled.alreadyPresent).toBe(true);
    expect(registryRequests("GET").filter((r) => r.url.pathname.includes("/blobs/"))).toEqual([]);
  });

  it("never mounts by default (shared layers are uploaded per repository); mounts when asked", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [1500]);
    await client.push(`${REGISTRY}/alice/one:v1`, local);
    const plain = await client.push(`${REGISTRY}/alice/two:v1`, local, { name: "v1" });
    expect(plain.uploaded.length).toBe(image.blobs.length);
    expect(registryRequests("POST").some((r) => r.url.searchParams.has("mount"))).toBe(false);

    const mounted = await client.push(`${REGISTRY}/alice/three:v1`, local, { name: "v1", mountFrom: ["alice/one"] });
    expect(mounted.mounted.sort()).toEqual(image.blobs.map((b) => b.digest).sort());
    expect(mounted.uploaded).toEqual([]);
  });

  it("a tampered blob fails the pull with DIGEST_INVALID and the store keeps nothing", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [2000]);
    await client.push(`${REGISTRY}/alice/tamper:v1`, local);
    intercept = async (request, forward) => {
      const response = await forward();
      if (request.method !== "GET" || !new URL(request.url).pathname.includes(image.blobs[1]!.digest)) return response;
      const bytes = new Uint8Array(await response.arrayBuffer());
      bytes[0]! ^= 1;
      return new Response(bytes, { status: 200, headers: response.headers });
    };
    const back = memoryImageStore();
    const err = await client.pull(`${REGISTRY}/alice/tamper:v1`, back).catch((e: unknown) => e);
    expect((err as RegistryClientError).code).toBe("DIGEST_INVALID");
    expect(back.blobs.has(image.blobs[1]!.digest)).toBe(false);
    expect(await back.resolveName("v1")).toBeUndefined();
  });

  it("reports progress and can be cancelled with an AbortSignal", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const image = await makeImage(local, "v1", [200_000]);
    const events: string[] = [];
    await client.push(`${REGISTRY}/alice/progress:v1`, local, { chunkSize: 50_000, onProgress: (e) => events.push(`${e.digest.slice(7, 15)}:${e.state}:${e.done}`) });
    const layer = image.blobs[1]!.digest.slice(7, 15);
    expect(events.filter((e) => e.startsWith(layer))).toEqual([
      `${layer}:started:0`, `${layer}:progress:50000`, `${layer}:progress:100000`, `${layer}:progress:150000`, `${layer}:progress:200000`, `${layer}:done:200000`,
    ]);

    const controller = new AbortController();
    controller.abort();
    const err = await client.pull(`${REGISTRY}/alice/progress:v1`, memoryImageStore(), { signal: controller.signal }).catch((e: unknown) => e);
    expect((err as Error).name).toBe("AbortError");
  });

  it("pulls the requested platform from an index", async () => {
    const client = createClient();
    await client.login(REGISTRY, "alice", "Alice-pass-1");
    const local = memoryImageStore();
    const amd = await makeImage(local, "amd", [1000]);
    const arm = await makeImage(local, "arm", [1100]);
    const index = new TextEncoder().encode(JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [
        { ...amd.manifest, platform: { os: "linux", architecture: "amd64" } },
        { ...arm.manifest, platform: { os: "linux", architecture: "arm64" } },
      ],
    }));
    const indexDigest = digestOf(index);
    await local.putBlob(indexDigest, new Response(index).body!);
    await local.setName("multi", { mediaType: "application/vnd.oci.image.index.v1+json", digest: indexDigest, size: index.byteLength });
    const pushed = await client.push(`${REGISTRY}/alice/multi:v1`, local, { name: "multi" });
    expect(pushed.digest).toBe(indexDigest);

    const back = memoryImageStore();
    const pulled = await client.pull(`${REGISTRY}/alice/multi:v1`, back, { platform: { os: "linux", architecture: "arm64" } });
    expect(pulled.manifest.digest).toBe(arm.manifest.digest);
    expect(back.blobs.has(arm.blobs[1]!.digest)).toBe(true);
    expect(back.blobs.has(amd.blobs[1]!.digest)).toBe(false);
  });
});
