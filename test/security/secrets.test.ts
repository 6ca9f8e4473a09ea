/**
 * No secret in any error body or log line. A scripted session runs the token
 * service, the registry (RS256 and HS256 authorizers) and the management API
 * over one storage, with good and bad credentials, tampered tokens and
 * `_state`, failing storage, and every kind of error; the log hook and every
 * response are captured and scanned for the passwords, tokens, upload secret,
 * HMAC key, private key PEM and password hashes.
 */
import { describe, expect, it } from "vitest";
import { createTokenAuthorizer, createTokenService, generatedKeys, hmacKeys } from "../../src/auth/index.js";
import type { LogEvent } from "../../src/http/log.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bootstrapAdmin, createUserService, storageUserStore, storeCredentialCheck } from "../../src/users/index.js";
import { bytes, imageManifest, sha256 } from "../registry/helpers.js";

const FAST = { N: 16, r: 1, p: 1 };
const ADMIN_PASSWORD = "Adm1n-Secret-Password";
const ALICE_PASSWORD = "Al1ce-Secret-Password";
const ALICE_NEW = "Al1ce-Newer-Password";
const WRONG_PASSWORDS = ["Wr0ng-Guess-Password", "Adm1n-Secret-Passwore"];
const UPLOAD_SECRET = "upload-hmac-secret-0123456789abcdef";
const HMAC_SECRET = "token-hmac-secret-0123456789abcdef0123";

/** Serialize a log event with the messages and stacks of errors in it. */
function serialize(event: LogEvent): string {
  return JSON.stringify(event, (_k, v) => (v instanceof Error ? { name: v.name, message: v.message, stack: v.stack, cause: String(v.cause) } : v));
}

/** Storage that fails a few reads, with an error message that names the key (not a secret). */
function flaky(storage: StorageDriver): StorageDriver & { failNext: number } {
  const wrapped = Object.create(storage) as StorageDriver & { failNext: number };
  wrapped.failNext = 0;
  wrapped.read = async (key, range) => {
    if (wrapped.failNext > 0) {
      wrapped.failNext--;
      throw new Error(`disk error reading ${key}`);
    }
    return storage.read(key, range);
  };
  return wrapped;
}

describe("secrets never leak into responses or logs", () => {
  it("a scripted session over every service", async () => {
    const logs: string[] = [];
    const log = (e: LogEvent) => void logs.push(serialize(e));
    const transcript: { what: string; text: string }[] = [];
    const issued: string[] = [];

    const storage = flaky(memoryStorage());
    const users = storageUserStore(storage);
    await bootstrapAdmin(users, { username: "admin", password: ADMIN_PASSWORD, scrypt: FAST } as Parameters<typeof bootstrapAdmin>[1]);
    const keys = generatedKeys({ alg: "RS256" });
    const pem = await keys.exportPem();
    const check = storeCredentialCheck(users, { scrypt: FAST });
    const tokens = createTokenService({ issuer: "iss", service: "reg", keys, checkCredentials: check, log });
    const hsTokens = createTokenService({ issuer: "iss", service: "reg", keys: hmacKeys({ secret: HMAC_SECRET }), checkCredentials: check, log });
    const registry = createRegistry({ storage, uploadSecret: UPLOAD_SECRET, deleteEnabled: true, log, authorize: createTokenAuthorizer({ realm: "http://t/token", service: "reg", issuer: "iss", keys, log }) });
    const hsRegistry = createRegistry({ storage, uploadSecret: UPLOAD_SECRET, log, authorize: createTokenAuthorizer({ realm: "http://t/token", service: "reg", issuer: "iss", hmacSecret: HMAC_SECRET, log }) });
    const api = createUserService({ store: users, scrypt: FAST, log });

    const call = async (handler: (r: Request) => Promise<Response>, method: string, url: string, init: { headers?: Record<string, string>; body?: BodyInit } = {}, tokenAnswer = false) => {
      const response = await handler(new Request(url.startsWith("http") ? url : `http://reg.test${url}`, { method, ...init }));
      const text = await response.text();
      if (tokenAnswer && response.status === 200) {
        const body = JSON.parse(text) as { token: string; refresh_token?: string };
        issued.push(body.token, ...(body.refresh_token ? [body.refresh_token] : []));
      } else transcript.push({ what: `${method} ${url.slice(0, 80)} → ${response.status}`, text: text + JSON.stringify([...response.headers]) });
      return { response, text, status: response.status };
    };
    const basic = (u: string, p: string) => ({ authorization: `Basic ${btoa(`${u}:${p}`)}` });
    const token = async (service: typeof tokens, u: string, p: string, scope: string) => {
      const r = await call(service, "GET", `http://t/token?service=reg&scope=${scope}`, { headers: basic(u, p) }, true);
      return r.status === 200 ? (JSON.parse(r.text) as { token: string }).token : "";
    };
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

    // management API: create alice, change her password, wrong passwords, bad bodies
    const json = { "content-type": "application/json" };
    expect((await call(api, "POST", "/api/users", { headers: { ...basic("admin", ADMIN_PASSWORD), ...json }, body: JSON.stringify({ username: "alice", email: "a@x.test", password: ALICE_PASSWORD }) })).status).toBe(201);
    expect((await call(api, "POST", "/api/users", { headers: { ...basic("admin", ADMIN_PASSWORD), ...json }, body: JSON.stringify({ username: "bob", email: "not-an-email", password: WRONG_PASSWORDS[0] }) })).status).toBe(400);
    expect((await call(api, "POST", "/api/users", { headers: { ...basic("admin", ADMIN_PASSWORD), ...json }, body: JSON.stringify({ username: "alice", email: "a2@x.test", password: ALICE_PASSWORD }) })).status).toBe(409);
    expect((await call(api, "PUT", "/api/users/2/password", { headers: { ...basic("alice", ALICE_PASSWORD), ...json }, body: JSON.stringify({ old_password: WRONG_PASSWORDS[0], new_password: ALICE_NEW }) })).status).toBe(403);
    expect((await call(api, "PUT", "/api/users/2/password", { headers: { ...basic("alice", ALICE_PASSWORD), ...json }, body: JSON.stringify({ old_password: ALICE_PASSWORD, new_password: ALICE_NEW }) })).status).toBe(204);
    expect((await call(api, "GET", "/api/users/current", { headers: basic("alice", ALICE_PASSWORD) })).status).toBe(401);
    expect((await call(api, "GET", "/api/users", { headers: basic("admin", WRONG_PASSWORDS[1]!) })).status).toBe(401);
    expect((await call(api, "GET", "/api/users", { headers: basic("admin", ADMIN_PASSWORD) })).status).toBe(200);
    expect((await call(api, "PUT", "/api/users/2", { headers: { ...basic("admin", ADMIN_PASSWORD), ...json }, body: `{"password":"${ADMIN_PASSWORD}"}` })).status).toBe(400);

    // token service: good, wrong, malformed; OAuth2 password and refresh grants
    const adminToken = await token(tokens, "admin", ADMIN_PASSWORD, "repository:lib/app:pull,push,delete");
    expect(adminToken).not.toBe("");
    expect(await token(tokens, "admin", WRONG_PASSWORDS[1]!, "repository:lib/app:pull")).toBe("");
    expect(await token(tokens, "alice", ALICE_PASSWORD, "repository:alice/app:pull")).toBe("");
    const aliceToken = await token(tokens, "alice", ALICE_NEW, "repository:alice/app:pull,push");
    const form = (f: Record<string, string>) => ({ headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(f).toString() });
    const granted = await call(tokens, "POST", "http://t/token", form({ grant_type: "password", username: "alice", password: ALICE_NEW, service: "reg", access_type: "offline" }), true);
    const refresh = (JSON.parse(granted.text) as { refresh_token: string }).refresh_token;
    expect(refresh).toBeTruthy();
    await call(tokens, "POST", "http://t/token", form({ grant_type: "password", username: "alice", password: WRONG_PASSWORDS[0]!, service: "reg" }), true);
    await call(tokens, "POST", "http://t/token", form({ grant_type: "refresh_token", refresh_token: refresh.slice(0, -3) + "AAA", service: "reg" }), true);
    await call(tokens, "POST", "http://t/token", form({ grant_type: "refresh_token", refresh_token: aliceToken, service: "reg" }), true);
    expect((await call(tokens, "POST", "http://t/token", form({ grant_type: "refresh_token", refresh_token: refresh, service: "reg" }), true)).status).toBe(200);
    await call(tokens, "GET", `http://t/token?service=reg&scope=${encodeURIComponent(ADMIN_PASSWORD)}`, { headers: basic("admin", ADMIN_PASSWORD) }, true);
    await call(tokens, "GET", "http://t/token?service=other", { headers: basic("admin", ADMIN_PASSWORD) }, true);
    const hsToken = await token(hsTokens, "admin", ADMIN_PASSWORD, "repository:lib/app:pull");

    // registry: push, pull, tampered tokens, tampered _state, errors, a storage failure
    const auth = bearer(adminToken);
    const push = async (content: string) => {
      const start = await call(registry, "POST", "/v2/lib/app/blobs/uploads/", { headers: auth });
      const url = new URL(start.response.headers.get("location")!);
      const stateUrl = new URL(url);
      stateUrl.searchParams.set("_state", url.searchParams.get("_state")!.replace(/.$/, (c) => (c === "A" ? "B" : "A")));
      expect((await call(registry, "GET", stateUrl.href, { headers: auth })).status).toBe(400);
      url.searchParams.set("digest", sha256(content));
      expect((await call(registry, "PUT", url.href, { headers: auth, body: content })).status).toBe(201);
      return sha256(content);
    };
    const config = await push("{}");
    const layer = await push("layer");
    const manifest = imageManifest(config, 2, [{ digest: layer, size: 5 }]);
    expect((await call(registry, "PUT", "/v2/lib/app/manifests/v1", { headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" }, body: manifest })).status).toBe(201);
    expect((await call(registry, "GET", "/v2/lib/app/manifests/v1", { headers: auth })).status).toBe(200);
    const [h, p, s] = adminToken.split(".") as [string, string, string];
    // Tampered endings differ from the real ones in bits the decoder reads ("Q", not "B": a last character's
    // low bits are padding), whatever the token ended with.
    const retail = (text: string, n: number): string => text.slice(0, -n) + (text.endsWith("A".repeat(n)) ? "Q" : "A").repeat(n);
    for (const bad of [`${h}.${p}.${retail(s, 4)}`, `${h}.${p.slice(0, -2)}.${s}`, `${h}.${p}`, aliceToken, refresh, hsToken, adminToken + "x"]) {
      expect((await call(registry, "GET", "/v2/lib/app/manifests/v1", { headers: bearer(bad) })).status).toBe(401);
    }
    expect((await call(hsRegistry, "GET", "/v2/lib/app/manifests/v1", { headers: bearer(hsToken) })).status).toBe(200);
    expect((await call(hsRegistry, "GET", "/v2/lib/app/manifests/v1", { headers: bearer(retail(hsToken, 2)) })).status).toBe(401);
    expect((await call(registry, "GET", "/v2/lib/app/manifests/v1", { headers: basic("admin", ADMIN_PASSWORD) })).status).toBe(401);
    expect((await call(registry, "PUT", "/v2/lib/app/manifests/v2", { headers: auth, body: bytes(`{"x":"${ADMIN_PASSWORD}"}`) })).status).toBe(400);
    // (A path segment is echoed in `detail`, e.g. a tag in MANIFEST_UNKNOWN: that is the caller's own input, not a leak.)
    storage.failNext = 1;
    expect((await call(registry, "GET", `/v2/lib/app/blobs/${layer}`, { headers: auth })).status).toBe(500);
    storage.failNext = 1;
    expect((await call(api, "GET", "/api/users/current", { headers: basic("admin", ADMIN_PASSWORD) })).status).toBe(500);
    expect((await call(registry, "DELETE", `/v2/lib/app/manifests/${sha256(manifest)}`, { headers: auth })).status).toBe(202);

    // the secrets: everything a leak could show
    const hashes = (await users.list({})).users.flatMap((u) => {
      const parts = u.passwordHash.split("$");
      return [u.passwordHash, parts[4]!, parts[5]!];
    });
    const pemBody = pem.privateKey.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    const pemChunks = pem.privateKey.split("\n").filter((l) => l.length >= 40 && !l.startsWith("-----"));
    const secrets: [string, string][] = [
      ...[ADMIN_PASSWORD, ALICE_PASSWORD, ALICE_NEW, ...WRONG_PASSWORDS].map((x) => ["password", x] as [string, string]),
      ...[ADMIN_PASSWORD, ALICE_NEW].map((x) => ["base64 password", btoa(x).slice(0, 16)] as [string, string]),
      ...issued.flatMap((t) => [["token", t], ["token signature", t.split(".")[2]!]] as [string, string][]),
      ["upload secret", UPLOAD_SECRET],
      ["HMAC secret", HMAC_SECRET],
      ["private key PEM", pemBody],
      ...pemChunks.map((c) => ["private key PEM line", c] as [string, string]),
      ...hashes.map((x) => ["password hash", x] as [string, string]),
    ];
    expect(issued.length).toBeGreaterThanOrEqual(5);
    expect(transcript.length).toBeGreaterThan(30);
    expect(logs.length).toBeGreaterThan(10);
    const leaks: string[] = [];
    for (const [kind, secret] of secrets) {
      for (const t of transcript) if (t.text.includes(secret)) leaks.push(`${kind} in response ${t.what}`);
      for (const l of logs) if (l.includes(secret)) leaks.push(`${kind} in log ${l.slice(0, 120)}`);
    }
    expect(leaks).toEqual([]);
  });
});
