/**
 * The pull-through cache in process: the upstream is another registry-kit
 * registry (behind its own token service, or Basic auth) reached through the
 * `fetch` of `registryUpstream`, which records every upstream request.
 */
import { describe, expect, it } from "vitest";
import { createBasicAuthorizer, createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import { registryUpstream, type UpstreamCredentials } from "../../src/client/index.js";
import { collectGarbage, createRegistry, expireCachedTags, type PullThroughUpstream, type Upstream } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { blobData } from "../../src/registry/stores/base/layout.js";
import { parseDigest } from "../../src/oci/digest.js";
import { errorCode, pushImage, req, sha256, type Handler } from "./helpers.js";

const UP = "http://upstream.test";
const ACCEPT = "application/vnd.oci.image.manifest.v1+json";

interface Seen {
  method: string;
  path: string;
}

function withRecorder(handler: Handler, inner: Handler) {
  const seen: Seen[] = [];
  let failWith: (() => Response | Promise<Response>) | undefined;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push({ method: request.method, path: new URL(request.url).pathname });
    if (failWith) return failWith();
    return handler(request);
  }) as typeof globalThis.fetch;
  return {
    seen,
    fetch,
    inner,
    fail(how: (() => Response | Promise<Response>) | undefined) {
      failWith = how;
    },
    count: (method: string, fragment: string) => seen.filter((s) => s.method === method && s.path.includes(fragment)).length,
  };
}

/** Seed an upstream directly (its storage is shared by an open handler over the same driver). */
function seeded() {
  const storage = memoryStorage();
  const open = createRegistry({ storage, uploadSecret: "upstream-secret" });
  return { storage, open };
}

function proxy(upstreams: PullThroughUpstream[], extra: Parameters<typeof createRegistry>[0] extends infer O ? Partial<O> : never = {}) {
  const storage = memoryStorage();
  return { storage, registry: createRegistry({ storage, uploadSecret: "proxy-secret", pullThrough: { upstreams }, ...extra }) };
}

async function pullAll(registry: Handler, name: string, tag: string): Promise<{ manifest: string; blobs: string[] }> {
  const m = await registry(req("GET", `/v2/${name}/manifests/${tag}`, { headers: { accept: ACCEPT } }));
  expect(m.status).toBe(200);
  const manifest = await m.text();
  const doc = JSON.parse(manifest) as { config: { digest: string }; layers: { digest: string }[] };
  const blobs: string[] = [];
  for (const d of [doc.config.digest, ...doc.layers.map((l) => l.digest)]) {
    const b = await registry(req("GET", `/v2/${name}/blobs/${d}`));
    expect(b.status).toBe(200);
    const body = new Uint8Array(await b.arrayBuffer());
    expect(sha256(body)).toBe(d);
    blobs.push(d);
  }
  return { manifest, blobs };
}

/** An upstream behind its own token service; user `mirror` may pull `mirror/*`. */
async function bearerUpstream() {
  const up = seeded();
  const keys = generatedKeys();
  const pem = await keys.exportPem();
  const tokens = createTokenService({ issuer: "up", service: "upstream.test", keys, checkCredentials: memoryCredentials({ mirror: { password: "Mirror-pass-1" } }) });
  const authorize = createTokenAuthorizer({ realm: `${UP}/token`, service: "upstream.test", issuer: "up", rootCertBundle: pem.certificate });
  const guarded = createRegistry({ storage: up.storage, uploadSecret: "upstream-secret", authorize });
  return { up, rec: withRecorder(async (r) => (new URL(r.url).pathname === "/token" ? tokens(r) : guarded(r)), guarded) };
}

describe("pull-through cache, Bearer upstream", () => {
  it("pulls through a prefix with the token flow, then serves from the cache with no upstream request", async () => {
    const { up, rec } = await bearerUpstream();
    const image = await pushImage(up.open, "mirror/alpine", "3", "alpine");
    const { registry } = proxy([{ prefix: "hub/", upstream: registryUpstream({ url: UP, fetch: rec.fetch, credentials: { username: "mirror", password: "Mirror-pass-1" } }), ttlSeconds: 3600 }]);

    const first = await pullAll(registry, "hub/mirror/alpine", "3");
    expect(first.manifest).toBe(image.manifest);
    // The challenge, one token for repository:mirror/alpine:pull, reused for every blob.
    const doc = JSON.parse(image.manifest) as { config: { digest: string } };
    expect(rec.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      "GET /v2/mirror/alpine/manifests/3",
      "GET /token",
      "GET /v2/mirror/alpine/manifests/3",
      `GET /v2/mirror/alpine/blobs/${doc.config.digest}`,
      `GET /v2/mirror/alpine/blobs/${image.layer}`,
    ]);
    const before = rec.seen.length;

    const second = await pullAll(registry, "hub/mirror/alpine", "3");
    expect(second).toEqual(first);
    expect(rec.seen.length).toBe(before);
    const cached = await registry(req("GET", "/v2/hub/mirror/alpine/manifests/3"));
    expect(cached.headers.get("cache-status")).toContain("hit");
  });

  it("sends a pull event for every manifest and blob served, fetched from the upstream or from the cache", async () => {
    const { up, rec } = await bearerUpstream();
    const image = await pushImage(up.open, "mirror/alpine", "3", "alpine");
    const events: { action: string; target: { repository?: string; digest?: string; mediaType?: string } }[] = [];
    const { registry } = proxy([{ prefix: "hub/", upstream: registryUpstream({ url: UP, fetch: rec.fetch, credentials: { username: "mirror", password: "Mirror-pass-1" } }), ttlSeconds: 3600 }], {
      onEvent: (event) => void events.push(event as (typeof events)[number]),
    });
    const pulled = [await pullAll(registry, "hub/mirror/alpine", "3"), await pullAll(registry, "hub/mirror/alpine", "3")];
    await new Promise((resolve) => setTimeout(resolve, 0));
    const doc = JSON.parse(image.manifest) as { config: { digest: string } };
    const served = (p: (typeof pulled)[number]) => [sha256(new TextEncoder().encode(p.manifest)), ...p.blobs];
    expect(events.filter((e) => e.action === "pull").map((e) => `${e.target.repository} ${e.target.digest}`)).toEqual(
      [...served(pulled[0]!), ...served(pulled[1]!)].map((d) => `hub/mirror/alpine ${d}`),
    );
    expect(pulled[0]!.blobs).toEqual([doc.config.digest, image.layer]);
  });

  it("refuses wrong upstream credentials as 502 and stores nothing", async () => {
    const { up, rec } = await bearerUpstream();
    await pushImage(up.open, "mirror/alpine", "3", "alpine");
    const { registry, storage } = proxy([{ prefix: "hub/", upstream: registryUpstream({ url: UP, fetch: rec.fetch, credentials: { username: "mirror", password: "wrong" } }) }]);
    const response = await registry(req("GET", "/v2/hub/mirror/alpine/manifests/3"));
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).not.toContain("wrong");
    expect((await storage.list("", { limit: 10 })).keys).toEqual([]);
  });
});

describe("pull-through cache, Basic upstream and local repositories", () => {
  async function basicSetup(credentials: PullThroughUpstream["upstream"] extends never ? never : UpstreamCredentials | (() => Promise<UpstreamCredentials>), options: Partial<PullThroughUpstream> = {}) {
    const up = seeded();
    const guarded = createRegistry({
      storage: up.storage,
      uploadSecret: "upstream-secret",
      authorize: createBasicAuthorizer({ realm: "upstream", check: async (u, p) => (u === "corp" && p === "Corp-pass-1" ? { name: u, admin: false } : undefined) }),
    });
    const rec = withRecorder(guarded, guarded);
    const image = await pushImage(up.open, "team/app", "v1", "app");
    const upstream = registryUpstream({ url: UP, fetch: rec.fetch, credentials });
    const { registry, storage } = proxy([{ prefix: "corp/", upstream, ttlSeconds: 3600, ...options }]);
    return { up, rec, image, registry, storage };
  }

  it("pulls with Basic credentials asked from a callback per request", async () => {
    let asked = 0;
    const { rec, image, registry } = await basicSetup(async () => {
      asked++;
      return { username: "corp", password: "Corp-pass-1" };
    });
    const pulled = await pullAll(registry, "corp/team/app", "v1");
    expect(pulled.manifest).toBe(image.manifest);
    expect(rec.count("GET", "/blobs/")).toBe(2);
    expect(asked).toBeGreaterThanOrEqual(3);
  });

  it("accepts pushes to local repositories and refuses them under a proxied prefix unless allowed", async () => {
    const { registry } = await basicSetup({ username: "corp", password: "Corp-pass-1" });
    await pushImage(registry, "local/app", "v1", "mine");
    expect((await registry(req("GET", "/v2/local/app/manifests/v1"))).status).toBe(200);
    const refused = await registry(req("POST", "/v2/corp/team/app/blobs/uploads/"));
    expect(refused.status).toBe(405);
    expect(refused.headers.get("allow")).toBe("");
    expect(await errorCode(refused)).toBe("UNSUPPORTED");
    const put = await registry(req("PUT", "/v2/corp/team/app/manifests/v2", { body: "{}", headers: { "content-type": ACCEPT } }));
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD");

    const allowing = await basicSetup({ username: "corp", password: "Corp-pass-1" }, { allowPush: true });
    await pushImage(allowing.registry, "corp/team/extra", "v1", "extra");
    expect((await allowing.registry(req("GET", "/v2/corp/team/extra/manifests/v1"))).status).toBe(200);
  });
});

describe("pull-through cache, tags, ttl and failures", () => {
  async function openSetup(ttlSeconds: number) {
    const up = seeded();
    const rec = withRecorder(up.open, up.open);
    const image = await pushImage(up.open, "library/redis", "7", "redis-a");
    const { registry, storage } = proxy([{ prefix: "", upstream: registryUpstream({ url: UP, fetch: rec.fetch }), ttlSeconds }]);
    return { up, rec, image, registry, storage };
  }

  it("after the ttl, an unchanged tag costs one HEAD and no GET; a moved tag one GET by digest", async () => {
    const { up, rec, image, registry } = await openSetup(0);
    await pullAll(registry, "library/redis", "7");
    expect(rec.count("GET", "/manifests/")).toBe(1);

    const again = await registry(req("GET", "/v2/library/redis/manifests/7"));
    expect(await again.text()).toBe(image.manifest);
    expect(again.headers.get("cache-status")).toContain("fwd=stale");
    expect(rec.count("HEAD", "/manifests/7")).toBe(1);
    expect(rec.count("GET", "/manifests/")).toBe(1);

    const moved = await pushImage(up.open, "library/redis", "7", "redis-b");
    const after = await registry(req("GET", "/v2/library/redis/manifests/7"));
    expect(await after.text()).toBe(moved.manifest);
    expect(rec.count("HEAD", "/manifests/7")).toBe(2);
    expect(rec.count("GET", `/manifests/${moved.digest}`)).toBe(1);
  });

  it("concurrent pulls of a tag past its ttl make one HEAD", async () => {
    const { rec, image, registry } = await openSetup(0);
    await pullAll(registry, "library/redis", "7");
    const texts = await Promise.all(Array.from({ length: 6 }, async () => (await registry(req("GET", "/v2/library/redis/manifests/7"))).text()));
    expect(new Set(texts)).toEqual(new Set([image.manifest]));
    expect(rec.count("HEAD", "/manifests/7")).toBe(1);
  });

  it("within the ttl, a tag is served with no upstream request", async () => {
    const { rec, registry } = await openSetup(3600);
    await pullAll(registry, "library/redis", "7");
    const count = rec.seen.length;
    expect((await registry(req("HEAD", "/v2/library/redis/manifests/7"))).status).toBe(200);
    expect(rec.seen.length).toBe(count);
  });

  it("serves a cached tag marked stale when the upstream fails or rate-limits; 502 / 429 when nothing is cached", async () => {
    const { rec, image, registry } = await openSetup(0);
    await pullAll(registry, "library/redis", "7");
    rec.fail(() => Promise.reject(new TypeError("connection refused")));
    const stale = await registry(req("GET", "/v2/library/redis/manifests/7"));
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(image.manifest);
    expect(stale.headers.get("warning")).toContain("110");
    expect(stale.headers.get("cache-status")).toContain("stale-if-error");
    const blob = await registry(req("GET", `/v2/library/redis/blobs/${image.layer}`));
    expect(blob.status).toBe(200);
    await blob.arrayBuffer();

    const missing = await registry(req("GET", "/v2/library/other/manifests/1"));
    expect(missing.status).toBe(502);
    expect(await errorCode(missing)).toBe("UNKNOWN");

    rec.fail(() => new Response('{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}', { status: 429 }));
    expect((await registry(req("GET", "/v2/library/redis/manifests/7"))).headers.get("warning")).toContain("110");
    const limited = await registry(req("GET", "/v2/library/other/manifests/1"));
    expect(limited.status).toBe(429);
    expect(await errorCode(limited)).toBe("TOOMANYREQUESTS");
  });

  it("a manifest by digest is fetched once and kept; an unknown one is MANIFEST_UNKNOWN", async () => {
    const { rec, image, registry } = await openSetup(0);
    for (let i = 0; i < 3; i++) expect(await (await registry(req("GET", `/v2/library/redis/manifests/${image.digest}`))).text()).toBe(image.manifest);
    expect(rec.count("GET", "/manifests/")).toBe(1);
    expect(rec.count("HEAD", "/manifests/")).toBe(0);
    const unknown = await registry(req("GET", `/v2/library/redis/manifests/${sha256("nope")}`));
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("MANIFEST_UNKNOWN");
  });

  it("concurrent pulls of one missing blob make one upstream GET", async () => {
    const { rec, image, registry } = await openSetup(3600);
    await registry(req("GET", "/v2/library/redis/manifests/7")).then((r) => r.text());
    const bodies = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const r = await registry(req("GET", `/v2/library/redis/blobs/${image.layer}`));
        expect(r.status).toBe(200);
        return sha256(new Uint8Array(await r.arrayBuffer()));
      }),
    );
    expect(new Set(bodies)).toEqual(new Set([image.layer]));
    expect(rec.count("GET", `/blobs/${image.layer}`)).toBe(1);
  });

  it("a blob stored for another repository is linked after an upstream HEAD, without a GET", async () => {
    const { up, rec, image, registry } = await openSetup(3600);
    await pullAll(registry, "library/redis", "7");
    await pushImage(up.open, "library/redis2", "7", "redis-a");
    const r = await registry(req("GET", `/v2/library/redis2/blobs/${image.layer}`));
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    expect(rec.count("HEAD", `/library/redis2/blobs/`)).toBe(1);
    expect(rec.count("GET", `/library/redis2/blobs/`)).toBe(0);
    // and the upstream must confirm: a repository without the blob does not get it
    const denied = await registry(req("GET", `/v2/library/empty/blobs/${image.layer}`));
    expect(denied.status).toBe(404);
  });
});

describe("pull-through cache, security", () => {
  it("a blob whose bytes do not match its digest is refused (one chunk: 502) and stores nothing", async () => {
    const good = new TextEncoder().encode("the real layer");
    const digest = sha256(good);
    const evil: Upstream = {
      headManifest: async () => undefined,
      getManifest: async () => undefined,
      headBlob: async () => ({ size: good.byteLength }),
      getBlob: async () => ({ body: new Response(new TextEncoder().encode("the evil layer")).body!, size: good.byteLength }),
    };
    const { registry, storage } = proxy([{ prefix: "", upstream: evil }]);
    const response = await registry(req("GET", `/v2/x/y/blobs/${digest}`));
    // Many chunks: see pull-through-verify.test.ts.
    expect(response.status).toBe(502);
    expect(await errorCode(response)).toBe("UNKNOWN");
    // the store side finishes after the client's side: wait until its upload object is gone
    for (let i = 0; i < 100 && (await storage.list("uploads", { limit: 10 })).keys.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await storage.stat(blobData(parseDigest(digest)))).toBeUndefined();
    expect((await storage.list("repositories/", { limit: 10 })).keys).toEqual([]);
  });

  it("a manifest whose bytes do not match is refused (502) and not stored", async () => {
    const real = JSON.stringify({ schemaVersion: 2, mediaType: ACCEPT, config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha256("c"), size: 1 }, layers: [] });
    const evil: Upstream = {
      headManifest: async () => undefined,
      getManifest: async () => ({ bytes: new TextEncoder().encode(real.replace("2", "2 ")), mediaType: ACCEPT, digest: sha256(real) }),
      headBlob: async () => undefined,
      getBlob: async () => undefined,
    };
    const { registry, storage } = proxy([{ prefix: "", upstream: evil }]);
    expect((await registry(req("GET", "/v2/x/y/manifests/latest"))).status).toBe(502);
    expect((await registry(req("GET", `/v2/x/y/manifests/${sha256(real)}`))).status).toBe(502);
    expect((await storage.list("", { limit: 10 })).keys).toEqual([]);
  });

  it("a caller who may not pull makes the registry fetch nothing", async () => {
    const up = seeded();
    const rec = withRecorder(up.open, up.open);
    await pushImage(up.open, "library/redis", "7", "redis-a");
    const { registry } = proxy([{ prefix: "", upstream: registryUpstream({ url: UP, fetch: rec.fetch }) }], {
      authorize: async (_request, needed) => (needed.length === 0 ? undefined : new Response(null, { status: 401 })),
    });
    expect((await registry(req("GET", "/v2/library/redis/manifests/7"))).status).toBe(401);
    expect((await registry(req("GET", `/v2/library/redis/blobs/${sha256("x")}`))).status).toBe(401);
    expect(rec.seen).toEqual([]);
  });

  it("refuses bad prefixes and duplicate ones", () => {
    const upstream = registryUpstream({ url: UP });
    expect(() => proxy([{ prefix: "hub", upstream }])).toThrow(TypeError);
    expect(() => proxy([{ prefix: "Hub/", upstream }])).toThrow(TypeError);
    expect(() => proxy([{ prefix: "a/", upstream }, { prefix: "a/", upstream }])).toThrow(TypeError);
    expect(() => registryUpstream({ url: "ftp://x" })).toThrow(TypeError);
  });
});


describe("eviction: expireCachedTags, then GC", () => {
  it("removes cached tags not confirmed for the given time, leaves local repositories, and GC frees their content", async () => {
    const up = seeded();
    const rec = withRecorder(up.open, up.open);
    const image = await pushImage(up.open, "library/redis", "7", "redis-a");
    const { registry, storage } = proxy([{ prefix: "hub/", upstream: registryUpstream({ url: UP, fetch: rec.fetch }), ttlSeconds: 60 }]);
    await pullAll(registry, "hub/library/redis", "7");
    const local = await pushImage(registry, "local/app", "v1", "mine");

    const later = () => new Date(Date.now() + 3600_000);
    const dry = await expireCachedTags(storage, { prefixes: ["hub/"], olderThanSeconds: 1800, dryRun: true, now: later });
    expect(dry.expired).toEqual(["hub/library/redis:7"]);
    expect((await registry(req("HEAD", "/v2/hub/library/redis/manifests/7"))).status).toBe(200);
    expect((await expireCachedTags(storage, { prefixes: ["hub/"], olderThanSeconds: 7200, now: later })).expired).toEqual([]);
    expect((await expireCachedTags(storage, { prefixes: ["hub/"], olderThanSeconds: 1800, now: later })).expired).toEqual(["hub/library/redis:7"]);

    const gc = await collectGarbage(storage, { removeUntagged: true, gracePeriodSeconds: 0, now: later });
    expect(gc.blobs.removed).toContain(image.layer);
    expect(gc.blobs.removed).not.toContain(local.layer);
    expect((await registry(req("GET", "/v2/local/app/manifests/v1"))).status).toBe(200);
    // the next pull fetches again
    const before = rec.count("GET", "/blobs/");
    await pullAll(registry, "hub/library/redis", "7");
    expect(rec.count("GET", "/blobs/")).toBe(before + 2);
  });
});

describe("pull-through cache, a stalled upstream", () => {
  it("a blob body that stops sending fails after the timeout, stores nothing, and the next pull asks again", async () => {
    const good = new TextEncoder().encode("a layer that never finishes");
    const digest = sha256(good);
    let gets = 0;
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.method === "GET" && new URL(request.url).pathname.includes("/blobs/")) {
        gets++;
        // one chunk, then silence
        const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(good.subarray(0, 4)) });
        return new Response(body, { status: 200, headers: { "content-length": String(good.byteLength) } });
      }
      return new Response(null, { status: 404 });
    }) as typeof globalThis.fetch;
    const { registry, storage } = proxy([{ prefix: "", upstream: registryUpstream({ url: UP, fetch, timeoutSeconds: 0.2 }) }]);
    // The body stalls before its end is known: the client is answered 502 (nothing was sent yet).
    const first = await registry(req("GET", `/v2/x/y/blobs/${digest}`));
    expect(first.status).toBe(502);
    // the store side gives up after the client's side: wait until its upload object is gone
    for (let i = 0; i < 200 && (await storage.list("uploads", { limit: 10 })).keys.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const second = await registry(req("GET", `/v2/x/y/blobs/${digest}`));
    expect(second.status).toBe(502);
    expect(gets).toBe(2);
    expect(await storage.stat(blobData(parseDigest(digest)))).toBeUndefined();
  });

  it("a HEAD of a missing blob asks the upstream and stores nothing", async () => {
    const up = seeded();
    const rec = withRecorder(up.open, up.open);
    const image = await pushImage(up.open, "library/redis", "7", "redis-a");
    const { registry, storage } = proxy([{ prefix: "", upstream: registryUpstream({ url: UP, fetch: rec.fetch }) }]);
    const head = await registry(req("HEAD", `/v2/library/redis/blobs/${image.layer}`));
    expect(head.status).toBe(200);
    expect(head.headers.get("cache-status")).toBe("registry-kit; fwd=uri-miss");
    expect(rec.count("GET", "/blobs/")).toBe(0);
    expect(await storage.stat(blobData(parseDigest(image.layer)))).toBeUndefined();
  });
});
