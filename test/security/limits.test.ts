/**
 * Every input limit, at the edge and just past it: exact status and body.
 * The table of limits is in docs/security.md.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createTokenService, generatedKeys, memoryCredentials, MAX_TOKEN_LENGTH, createTokenAuthorizer } from "../../src/auth/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { MAX_NAME_LENGTH } from "../../src/registry/names.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { createUserService, hashPassword, memoryUserStore, MAX_PASSWORD_LENGTH, verifyPassword } from "../../src/users/index.js";
import { bytes, imageManifest, pushBlob, req, sha256 } from "../registry/helpers.js";

async function json(r: Response): Promise<any> {
  return JSON.parse(await r.text());
}

/** A valid OCI manifest padded with trailing spaces (valid JSON) to exactly `size` bytes. */
async function manifestOfSize(registry: (r: Request) => Promise<Response>, size: number): Promise<Uint8Array<ArrayBuffer>> {
  const config = await pushBlob(registry, "lim/app", "{}");
  const layer = await pushBlob(registry, "lim/app", "layer");
  const text = imageManifest(config, 2, [{ digest: layer, size: 5 }]);
  return bytes(text + " ".repeat(size - text.length));
}

describe("registry limits", () => {
  const LIMIT = 8192;
  const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s", limits: { manifestBytes: LIMIT, listEntries: 5 } });

  it("manifest of exactly limits.manifestBytes is stored; one byte more is 413 SIZE_INVALID", async () => {
    const at = await manifestOfSize(registry, LIMIT);
    const ok = await registry(req("PUT", "/v2/lim/app/manifests/at", { body: at, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(ok.status).toBe(201);
    const over = await manifestOfSize(registry, LIMIT + 1);
    const big = await registry(req("PUT", "/v2/lim/app/manifests/over", { body: over, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(big.status).toBe(413);
    expect(await json(big)).toEqual({ errors: [{ code: "SIZE_INVALID", message: `manifest exceeds ${LIMIT} bytes`, detail: { limit: LIMIT } }] });
    // streamed without Content-Length: cut off while reading, same answer
    const stream = new ReadableStream({ start: (c) => (c.enqueue(over), c.close()) });
    const streamed = await registry(req("PUT", "/v2/lim/app/manifests/over", { body: stream, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(streamed.status).toBe(413);
    // a declared Content-Length over the limit fails before reading
    const declared = await registry(req("PUT", "/v2/lim/app/manifests/over", { body: at, headers: { "content-length": String(LIMIT + 1) } }));
    expect(declared.status).toBe(413);
    expect((await registry(req("GET", "/v2/lim/app/manifests/over"))).status).toBe(404);
  });

  it("default manifest limit is 4 MiB", async () => {
    const r = createRegistry({ storage: memoryStorage(), uploadSecret: "s" });
    const res = await r(req("PUT", "/v2/a/manifests/x", { body: new Uint8Array(4 * 1024 * 1024 + 1) }));
    expect(res.status).toBe(413);
    expect((await json(res)).errors[0].detail).toEqual({ limit: 4 * 1024 * 1024 });
  });

  it("n = limits.listEntries is served; n + 1 is 400 PAGINATION_NUMBER_INVALID (catalog and tags)", async () => {
    for (const path of ["/v2/_catalog", "/v2/lim/app/tags/list"]) {
      expect((await registry(req("GET", `${path}?n=5`))).status).toBe(200);
      const over = await registry(req("GET", `${path}?n=6`));
      expect(over.status).toBe(400);
      expect(await json(over)).toEqual({ errors: [{ code: "PAGINATION_NUMBER_INVALID", message: "n must not exceed 5", detail: { n: 6, limit: 5 } }] });
      const huge = await registry(req("GET", `${path}?n=${"9".repeat(16)}`));
      expect(huge.status).toBe(400);
      expect((await json(huge)).errors[0].code).toBe("PAGINATION_NUMBER_INVALID");
    }
  });

  it("repository names: 255 characters accepted, 256 is 400 NAME_INVALID; tags: 128 accepted, 129 is 400 TAG_INVALID on PUT and 404 MANIFEST_UNKNOWN on GET", async () => {
    const at = "a/" + "b".repeat(MAX_NAME_LENGTH - 2);
    expect((await registry(req("GET", `/v2/${at}/tags/list`))).status).toBe(404); // NAME_UNKNOWN: valid, just absent
    const over = await registry(req("GET", `/v2/${at}b/tags/list`));
    expect(over.status).toBe(400);
    expect((await json(over)).errors[0].code).toBe("NAME_INVALID");
    expect((await json(await registry(req("GET", `/v2/lim/app/manifests/${"t".repeat(128)}`)))).errors[0].code).toBe("MANIFEST_UNKNOWN");
    const put = await registry(req("PUT", `/v2/lim/app/manifests/${"t".repeat(129)}`, { body: "{}" }));
    expect(put.status).toBe(400);
    expect((await json(put)).errors[0].code).toBe("TAG_INVALID");
    const get = await registry(req("GET", `/v2/lim/app/manifests/${"t".repeat(129)}`));
    expect(get.status).toBe(404);
    expect((await json(get)).errors[0].code).toBe("MANIFEST_UNKNOWN");
  });

  it("_state longer than 2048 characters is 400 BLOB_UPLOAD_INVALID", async () => {
    const start = await registry(req("POST", "/v2/lim/app/blobs/uploads/"));
    const url = new URL(start.headers.get("location")!);
    url.searchParams.set("_state", "A".repeat(2049));
    const res = await registry(req("GET", url.href));
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ errors: [{ code: "BLOB_UPLOAD_INVALID", message: "invalid upload state: malformed", detail: null }] });
  });

  it("digests longer than 256 characters are 400 DIGEST_INVALID", async () => {
    const res = await registry(req("GET", `/v2/lim/app/blobs/sha256:${"a".repeat(300)}`));
    expect(res.status).toBe(400);
    expect((await json(res)).errors[0].code).toBe("DIGEST_INVALID");
  });
});

describe("upload session expiry (limits.uploadMaxAgeSeconds)", () => {
  afterEach(() => vi.useRealTimers());

  it("an upload is usable up to its maximum age; past it, 404 BLOB_UPLOAD_UNKNOWN and its object is removed", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = new Date("2030-01-01T00:00:00Z").getTime();
    vi.setSystemTime(t0);
    const storage = memoryStorage();
    const registry = createRegistry({ storage, uploadSecret: "s", limits: { uploadMaxAgeSeconds: 60 } });
    const start = await registry(req("POST", "/v2/exp/app/blobs/uploads/"));
    const location = start.headers.get("location")!;
    vi.setSystemTime(t0 + 60_000);
    const atEdge = await registry(req("GET", location));
    expect(atEdge.status).toBe(204);
    vi.setSystemTime(t0 + 60_001);
    const late = await registry(req("PATCH", location, { body: bytes("x") }));
    expect(late.status).toBe(404);
    expect(await json(late)).toEqual({ errors: [{ code: "BLOB_UPLOAD_UNKNOWN", message: "blob upload unknown to registry", detail: null }] });
    expect((await storage.list("repositories/exp/app/_uploads")).keys).toEqual([]);
    // The state carries the start time: a fresh Location from the status call does not extend the session.
    expect((await registry(req("GET", atEdge.headers.get("location")!))).status).toBe(404);
  });
});

describe("token service limits", () => {
  const service = createTokenService({ issuer: "i", service: "reg", keys: generatedKeys({ alg: "ES256" }), maxScopes: 4, maxFormBytes: 1024, checkCredentials: memoryCredentials({ u: { password: "p" } }) });
  const scopes = (n: number, same = false) => Array.from({ length: n }, (_, i) => `repository:r${same ? 0 : i}:pull`);

  it("maxScopes scope items are accepted; one more is 400 invalid_scope, duplicates counted", async () => {
    const q = (list: string[]) => `http://auth.test/token?${list.map((s) => `scope=${encodeURIComponent(s)}`).join("&")}`;
    expect((await service(new Request(q(scopes(4))))).status).toBe(200);
    for (const list of [scopes(5), scopes(5, true), [scopes(3).join(" "), scopes(2).join(" ")]]) {
      const r = await service(new Request(q(list)));
      expect(r.status).toBe(400);
      expect(await json(r)).toEqual({ error: "invalid_scope", details: "too many scopes (at most 4)" });
    }
    const form = await service(new Request("http://auth.test/token", { method: "POST", body: new URLSearchParams({ grant_type: "password", username: "u", password: "p", scope: scopes(5).join(" ") }) }));
    expect(form.status).toBe(400);
    expect(await json(form)).toEqual({ error: "invalid_scope", error_description: "too many scopes (at most 4)", details: "too many scopes (at most 4)" });
  });

  it("default maxScopes is 64", async () => {
    const s = createTokenService({ issuer: "i", service: "reg", keys: generatedKeys({ alg: "ES256" }) });
    const q = (n: number) => `http://auth.test/token?${scopes(n, true).map((x) => `scope=${x}`).join("&")}`;
    expect((await s(new Request(q(64)))).status).toBe(200);
    expect((await s(new Request(q(65)))).status).toBe(400);
  });

  it("a POST form of maxFormBytes is read; one byte more is 413 invalid_request", async () => {
    const base = "grant_type=password&username=u&password=p&client_id=";
    const at = base + "x".repeat(1024 - base.length);
    const ok = await service(new Request("http://auth.test/token", { method: "POST", body: at, headers: { "content-type": "application/x-www-form-urlencoded" } }));
    expect(ok.status).toBe(200);
    const over = await service(new Request("http://auth.test/token", { method: "POST", body: at + "x", headers: { "content-type": "application/x-www-form-urlencoded" } }));
    expect(over.status).toBe(413);
    expect(await json(over)).toEqual({ error: "invalid_request", error_description: "request body too large", details: "request body too large" });
  });
});

describe("bearer token length (MAX_TOKEN_LENGTH)", () => {
  it("a token over 64 KiB is refused as invalid without being decoded", async () => {
    const log: string[] = [];
    const authorize = createTokenAuthorizer({ realm: "http://a/token", service: "reg", issuer: "i", keys: generatedKeys({ alg: "ES256" }), log: (e) => void log.push(String(e.reason)) });
    const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s", authorize });
    for (const n of [MAX_TOKEN_LENGTH, MAX_TOKEN_LENGTH + 1]) {
      const r = await registry(req("GET", "/v2/", { headers: { authorization: `Bearer ${"a".repeat(n)}` } }));
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect((await json(r)).errors[0].code).toBe("UNAUTHORIZED");
    }
    expect(log).toEqual(["malformed token", "malformed token: too long"]);
  });
});

describe("management API limits", () => {
  const FAST = { N: 16, r: 1, p: 1 };
  async function service(options: { maxBodyBytes?: number; maxPageSize?: number } = {}) {
    const store = memoryUserStore();
    await store.create({ username: "root", email: "r@x.test", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword("Root1234", FAST) });
    const handler = createUserService({ store, scrypt: FAST, ...options });
    const auth = { authorization: `Basic ${btoa("root:Root1234")}` };
    return { handler, auth };
  }

  it("a JSON body of maxBodyBytes is read; one byte more is 413 PAYLOAD_TOO_LARGE", async () => {
    const { handler, auth } = await service({ maxBodyBytes: 200 });
    const text = (n: number) => {
      const base = JSON.stringify({ sysadmin_flag: true });
      return base + " ".repeat(n - base.length);
    };
    const at = await handler(new Request("http://x/api/users/1/sysadmin", { method: "PUT", body: text(200), headers: { ...auth, "content-type": "application/json" } }));
    expect(at.status).toBe(200);
    const over = await handler(new Request("http://x/api/users/1/sysadmin", { method: "PUT", body: text(201), headers: { ...auth, "content-type": "application/json" } }));
    expect(over.status).toBe(413);
    expect(await json(over)).toEqual({ errors: [{ code: "PAYLOAD_TOO_LARGE", message: "the body must be at most 200 bytes" }] });
  });

  it("page_size up to maxPageSize (default 100) is served; one more is 400 BAD_REQUEST on page_size", async () => {
    for (const [options, max] of [[{}, 100], [{ maxPageSize: 3 }, 3]] as const) {
      const { handler, auth } = await service(options);
      expect((await handler(new Request(`http://x/api/users?page_size=${max}`, { headers: auth }))).status).toBe(200);
      const over = await handler(new Request(`http://x/api/users?page_size=${max + 1}`, { headers: auth }));
      expect(over.status).toBe(400);
      expect(await json(over)).toEqual({ errors: [{ code: "BAD_REQUEST", message: `page_size must be an integer from 1 to ${max}`, field: "page_size" }] });
    }
    expect(() => createUserService({ store: memoryUserStore(), maxPageSize: 0 })).toThrow(RangeError);
  });

  it("maxPageSize below the default page size lowers the default too", async () => {
    const { handler, auth } = await service({ maxPageSize: 1 });
    const store = await handler(new Request("http://x/api/users", { method: "POST", body: JSON.stringify({ username: "bob", email: "b@x.test", password: "Bob12345" }), headers: { ...auth, "content-type": "application/json" } }));
    expect(store.status).toBe(201);
    const list = await handler(new Request("http://x/api/users", { headers: auth }));
    expect(list.status).toBe(200);
    expect(((await json(list)) as unknown[]).length).toBe(1);
  });

  it(`passwords of ${MAX_PASSWORD_LENGTH} characters are accepted; ${MAX_PASSWORD_LENGTH + 1} are 400 before any hashing`, async () => {
    const { handler, auth } = await service();
    const pw = (n: number) => "Aa1" + "x".repeat(n - 3);
    const create = (password: string, username: string) =>
      handler(new Request("http://x/api/users", { method: "POST", body: JSON.stringify({ username, email: `${username}@x.test`, password }), headers: { ...auth, "content-type": "application/json" } }));
    expect((await create(pw(MAX_PASSWORD_LENGTH), "long")).status).toBe(201);
    const over = await create(pw(MAX_PASSWORD_LENGTH + 1), "longer");
    expect(over.status).toBe(400);
    expect(await json(over)).toEqual({ errors: [{ code: "BAD_REQUEST", message: `password must be 8 to ${MAX_PASSWORD_LENGTH} characters`, field: "password" }] });
    // the credential check never hashes an over-long password, and never matches it
    await expect(hashPassword(pw(MAX_PASSWORD_LENGTH + 1), FAST)).rejects.toThrow(RangeError);
    const hash = await hashPassword(pw(MAX_PASSWORD_LENGTH), FAST);
    expect(await verifyPassword(pw(MAX_PASSWORD_LENGTH), hash)).toBe(true);
    expect(await verifyPassword(pw(MAX_PASSWORD_LENGTH) + "x", hash, FAST)).toBe(false);
    // an over-long password in Basic credentials is just a wrong password: 401
    const basic = await handler(new Request("http://x/api/users/current", { headers: { authorization: `Basic ${btoa(`root:${"x".repeat(100_000)}`)}` } }));
    expect(basic.status).toBe(401);
  });
});

void sha256;
