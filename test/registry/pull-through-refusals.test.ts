/**
 * Issue 41, item 3: a repository the proxy's account may not read upstream is
 * answered with the OCI error the upstream's answer stands for (403 `DENIED`;
 * a 404 stays `MANIFEST_UNKNOWN` / `BLOB_UNKNOWN`), not a 502, while a failed
 * login of the proxy stays a 502; and concurrent blob `HEAD`s of one digest
 * make one upstream `HEAD`. The upstream is a registry-kit registry (behind its
 * token service, or answering 403) reached through an in-process fetch that
 * counts every request it answers.
 */
import { describe, expect, it } from "vitest";
import { createBasicAuthorizer, createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import { registryUpstream, type UpstreamCredentials } from "../../src/client/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { errorCode, pushImage, req, sha256, type Handler } from "./helpers.js";

const UP = "http://upstream.test";

/** `handler` as the upstream's fetch, answering after `delayMs`, with every `METHOD path` kept. */
function counted(handler: Handler, delayMs = 0) {
  const seen: string[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push(`${request.method} ${new URL(request.url).pathname}`);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return handler(request);
  }) as typeof globalThis.fetch;
  return { seen, fetch, count: (method: string, fragment: string) => seen.filter((s) => s.startsWith(`${method} `) && s.includes(fragment)).length };
}

function proxyOf(fetch: typeof globalThis.fetch, credentials?: UpstreamCredentials) {
  const upstream = registryUpstream({ url: UP, fetch, ...(credentials ? { credentials } : {}) });
  return createRegistry({ storage: memoryStorage(), uploadSecret: "proxy-secret", log: () => {}, pullThrough: { upstreams: [{ prefix: "", upstream }] } });
}

/** An upstream behind its token service; user `mirror` may pull only `mirror/*` (the default policy). */
async function bearerUpstream() {
  const storage = memoryStorage();
  const open = createRegistry({ storage, uploadSecret: "upstream-secret" });
  const keys = generatedKeys();
  const pem = await keys.exportPem();
  const tokens = createTokenService({ issuer: "up", service: "upstream.test", keys, checkCredentials: memoryCredentials({ mirror: { password: "Mirror-pass-1" } }) });
  const authorize = createTokenAuthorizer({ realm: `${UP}/token`, service: "upstream.test", issuer: "up", rootCertBundle: pem.certificate });
  const guarded = createRegistry({ storage, uploadSecret: "upstream-secret", authorize });
  return { open, handler: (r: Request) => (new URL(r.url).pathname === "/token" ? tokens(r) : guarded(r)) };
}

async function expectError(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(await errorCode(response)).toBe(code);
}

describe("pull-through: the upstream's refusals of a repository", () => {
  it("a repository the proxy's account may not read (Bearer, insufficient_scope) is 403 DENIED for manifests and blobs, GET and HEAD", async () => {
    const up = await bearerUpstream();
    const image = await pushImage(up.open, "private/app", "v1", "secret");
    const rec = counted(up.handler);
    const registry = proxyOf(rec.fetch, { username: "mirror", password: "Mirror-pass-1" });
    await expectError(await registry(req("GET", "/v2/private/app/manifests/v1")), 403, "DENIED");
    expect((await registry(req("HEAD", "/v2/private/app/manifests/v1"))).status).toBe(403);
    await expectError(await registry(req("GET", `/v2/private/app/manifests/${image.digest}`)), 403, "DENIED");
    await expectError(await registry(req("GET", `/v2/private/app/blobs/${image.layer}`)), 403, "DENIED");
    const head = await registry(req("HEAD", `/v2/private/app/blobs/${image.layer}`));
    expect(head.status).toBe(403);
    // and the account's own repositories still pull
    await pushImage(up.open, "mirror/app", "v1", "mine");
    expect((await registry(req("GET", "/v2/mirror/app/manifests/v1"))).status).toBe(200);
  });

  it("an upstream 403 is 403 DENIED; an upstream 404 is MANIFEST_UNKNOWN / BLOB_UNKNOWN", async () => {
    const denied = counted(async () => Response.json({ errors: [{ code: "DENIED", message: "requested access to the resource is denied" }] }, { status: 403 }));
    const registry = proxyOf(denied.fetch);
    await expectError(await registry(req("GET", "/v2/corp/app/manifests/v1")), 403, "DENIED");
    await expectError(await registry(req("GET", `/v2/corp/app/blobs/${sha256("x")}`)), 403, "DENIED");

    const missing = counted(async () => Response.json({ errors: [{ code: "NAME_UNKNOWN", message: "repository name not known to registry" }] }, { status: 404 }));
    const other = proxyOf(missing.fetch);
    await expectError(await other(req("GET", "/v2/corp/none/manifests/v1")), 404, "MANIFEST_UNKNOWN");
    await expectError(await other(req("GET", `/v2/corp/none/blobs/${sha256("x")}`)), 404, "BLOB_UNKNOWN");
    expect((await other(req("HEAD", `/v2/corp/none/blobs/${sha256("x")}`))).status).toBe(404);
  });

  it("a failed login of the proxy stays a 502 (Basic refused, token endpoint refused)", async () => {
    const storage = memoryStorage();
    const basic = createRegistry({
      storage,
      uploadSecret: "upstream-secret",
      authorize: createBasicAuthorizer({ realm: "upstream", check: async (u, p) => (u === "corp" && p === "Corp-pass-1" ? { name: u, admin: false } : undefined) }),
    });
    await pushImage(createRegistry({ storage, uploadSecret: "upstream-secret" }), "team/app", "v1", "app");
    const wrongBasic = proxyOf(counted(basic).fetch, { username: "corp", password: "wrong" });
    await expectError(await wrongBasic(req("GET", "/v2/team/app/manifests/v1")), 502, "UNKNOWN");

    const up = await bearerUpstream();
    const wrongToken = proxyOf(counted(up.handler).fetch, { username: "mirror", password: "wrong" });
    await expectError(await wrongToken(req("GET", "/v2/mirror/app/manifests/v1")), 502, "UNKNOWN");
  });
});

describe("pull-through: concurrent blob HEADs", () => {
  it("five concurrent HEADs of one missing blob make one upstream HEAD", async () => {
    const storage = memoryStorage();
    const open = createRegistry({ storage, uploadSecret: "upstream-secret" });
    const image = await pushImage(open, "library/redis", "7", "redis");
    const rec = counted(open, 20);
    const registry = proxyOf(rec.fetch);
    const answers = await Promise.all(Array.from({ length: 5 }, () => registry(req("HEAD", `/v2/library/redis/blobs/${image.layer}`))));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((r) => r.headers.get("content-length"))).size).toBe(1);
    expect(rec.count("HEAD", `/blobs/${image.layer}`)).toBe(1);
    // settled flights are forgotten: a later HEAD asks again
    await registry(req("HEAD", `/v2/library/redis/blobs/${image.layer}`));
    expect(rec.count("HEAD", `/blobs/${image.layer}`)).toBe(2);
  });

  it("five concurrent pulls of a blob stored for another repository make one upstream HEAD (and no GET)", async () => {
    const storage = memoryStorage();
    const open = createRegistry({ storage, uploadSecret: "upstream-secret" });
    const image = await pushImage(open, "library/redis", "7", "redis");
    await pushImage(open, "library/redis2", "7", "redis");
    const rec = counted(open, 20);
    const registry = proxyOf(rec.fetch);
    const first = await registry(req("GET", `/v2/library/redis/blobs/${image.layer}`));
    expect(sha256(new Uint8Array(await first.arrayBuffer()))).toBe(image.layer);
    const bodies = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const r = await registry(req("GET", `/v2/library/redis2/blobs/${image.layer}`));
        expect(r.status).toBe(200);
        return sha256(new Uint8Array(await r.arrayBuffer()));
      }),
    );
    expect(new Set(bodies)).toEqual(new Set([image.layer]));
    expect(rec.count("HEAD", "/library/redis2/blobs/")).toBe(1);
    expect(rec.count("GET", "/library/redis2/blobs/")).toBe(0);
  });

  it("a refused HEAD is refused to every waiter", async () => {
    const rec = counted(async () => Response.json({ errors: [{ code: "DENIED", message: "no" }] }, { status: 403 }), 20);
    const registry = proxyOf(rec.fetch);
    const answers = await Promise.all(Array.from({ length: 5 }, () => registry(req("HEAD", `/v2/corp/app/blobs/${sha256("y")}`))));
    expect(answers.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(rec.count("HEAD", "/blobs/")).toBe(1);
  });
});
