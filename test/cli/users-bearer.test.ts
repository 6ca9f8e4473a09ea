/**
 * The all-in-one server's management API accepts `Authorization: Basic`
 * (checked against the store) **or** a Bearer token from its own token
 * service whose audience is the management service
 * (`<auth.token.service>-management`, `registry-kit-management` by default).
 * Registry tokens, anonymous tokens, expired tokens, tokens from another key
 * and garbage are all 401; the store's current record decides (a deleted
 * user's token stops working; a token is bound to the user's uid and
 * credential version, so a role change refuses the tokens issued before).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatedKeys, pemKeys, signJwt } from "../../src/auth/index.js";
import { createAllInOne, managementAudience, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { bannerLines } from "../../src/cli/banner.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { FAST } from "../users/helpers.js";

const ORIGIN = "http://registry.test:5000";
const ADMIN_PASSWORD = "Adm1nPassword";
const MANAGEMENT = "registry-kit-management";
let dir: string;
let app: AllInOne;

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const bearer = (token: string) => `Bearer ${token}`;
const call = (p: string, init: RequestInit = {}) => app.handler(new Request(`${ORIGIN}${p}`, init));
const payload = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;

async function token(service: string, auth?: string, scope?: string): Promise<string> {
  const q = new URLSearchParams({ service, ...(scope ? { scope } : {}) });
  const res = await call(`/service/token?${q}`, { headers: auth ? { authorization: auth } : {} });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

async function current(auth: string): Promise<Response> {
  return call("/api/users/current", { headers: { authorization: auth } });
}

/** A token signed with the server's own signing key, with chosen claims (and the admin's current binding). */
async function forged(claims: Record<string, unknown>, header?: Record<string, unknown>): Promise<string> {
  const keyFile = app.info.tokenService!.keyFile;
  const signing = await pemKeys({ privateKey: await readFile(keyFile, "utf8") }).signingKey();
  const now = Math.floor(Date.now() / 1000);
  const { uid, cred_ver } = payload(await token(MANAGEMENT, basic("admin", ADMIN_PASSWORD)));
  const body = { iss: "registry-kit", aud: MANAGEMENT, sub: "admin", iat: now, nbf: now, exp: now + 300, jti: "t", access: [], uid, cred_ver, ...claims };
  return signJwt(body, signing, header ? { header } : {});
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-users-bearer-"));
  const config = resolveConfig({ document: undefined, env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: ADMIN_PASSWORD }, cwd: dir }).config;
  // Fast scrypt for the hashes this test makes: every Basic request checks one.
  app = await createAllInOne(config, { origin: ORIGIN, storage: memoryStorage(), scrypt: FAST });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("management API behind the all-in-one server: Basic or Bearer", () => {
  it("names the management audience after the registry's service, and says so in info and the banner", () => {
    expect(managementAudience("registry-kit")).toBe(MANAGEMENT);
    expect(app.info.users).toEqual({ path: "/api/users", audience: MANAGEMENT });
    expect(bannerLines(ORIGIN, app.info, "0.0.0")).toContain(
      `  users API       ${ORIGIN}/api/users (Basic, or Bearer tokens for service "${MANAGEMENT}")`,
    );
  });

  it("Basic still works", async () => {
    const res = await current(basic("admin", ADMIN_PASSWORD));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ username: "admin", sysadmin_flag: true });
  });

  it("a token for the management audience, obtained with Basic, identifies the caller", async () => {
    const t = await token(MANAGEMENT, basic("admin", ADMIN_PASSWORD));
    expect(payload(t)).toMatchObject({ iss: "registry-kit", aud: MANAGEMENT, sub: "admin", uid: expect.any(String), cred_ver: 0 });
    const res = await current(bearer(t));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ username: "admin", sysadmin_flag: true });
    // the administrator's rights come with it
    expect((await call("/api/users", { headers: { authorization: bearer(t) } })).status).toBe(200);
  });

  it("a registry-audience token is refused by the management API (and a management token by the registry)", async () => {
    const registryToken = await token("registry-kit", basic("admin", ADMIN_PASSWORD), "repository:team/app:pull");
    expect(payload(registryToken).aud).toBe("registry-kit");
    const res = await current(bearer(registryToken));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect((await res.json()) as unknown).toMatchObject({ errors: [{ code: "UNAUTHORIZED" }] });

    const managementToken = await token(MANAGEMENT, basic("admin", ADMIN_PASSWORD), "repository:team/app:pull");
    expect((await call("/v2/team/app/tags/list", { headers: { authorization: bearer(managementToken) } })).status).toBe(401);
  });

  it("a request without service still gets a registry token (the registry's service stays the default)", async () => {
    const res = await call("/service/token?scope=repository:team/app:pull", { headers: { authorization: basic("admin", ADMIN_PASSWORD) } });
    expect(res.status).toBe(200);
    expect(payload(((await res.json()) as { token: string }).token).aud).toBe("registry-kit");
  });

  it("an anonymous management token (empty sub) is refused", async () => {
    const t = await token(MANAGEMENT);
    expect(payload(t).sub).toBe("");
    expect((await current(bearer(t))).status).toBe(401);
  });

  it("an expired token is refused; the same claims unexpired are accepted", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await current(bearer(await forged({})))).status).toBe(200);
    const expired = await forged({ iat: now - 7200, nbf: now - 7200, exp: now - 3600 });
    expect((await current(bearer(expired))).status).toBe(401);
  });

  it("a token with a crit header or a fractional time is refused; the same claims without them are accepted", async () => {
    expect((await current(bearer(await forged({})))).status).toBe(200);
    expect((await current(bearer(await forged({}, { crit: ["urn:example:ext"], "urn:example:ext": 1 })))).status).toBe(401);
    expect((await current(bearer(await forged({}, { crit: "urn:example:ext" })))).status).toBe(401);
    expect((await current(bearer(await forged({ exp: Math.floor(Date.now() / 1000) + 300.5 })))).status).toBe(401);
  });

  it("tokens from another key, another issuer, garbage and a tampered payload are refused", async () => {
    const other = await generatedKeys().signingKey();
    const now = Math.floor(Date.now() / 1000);
    const foreign = await signJwt({ iss: "registry-kit", aud: MANAGEMENT, sub: "admin", iat: now, nbf: now, exp: now + 300, access: [] }, other);
    expect((await current(bearer(foreign))).status).toBe(401);
    expect((await current(bearer(await forged({ iss: "someone-else" })))).status).toBe(401);
    expect((await current(bearer("garbage"))).status).toBe(401);
    expect((await current(bearer("a.b.c"))).status).toBe(401);
    expect((await current("Bearer")).status).toBe(401);
    const good = await token(MANAGEMENT, basic("admin", ADMIN_PASSWORD));
    const [h, , s] = good.split(".");
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload(good), sub: "mallory" })).toString("base64url")}.${s}`;
    expect((await current(bearer(tampered))).status).toBe(401);
  });

  it("a token without the user's binding (uid, cred_ver) is refused", async () => {
    expect((await current(bearer(await forged({ uid: undefined, cred_ver: undefined })))).status).toBe(401);
    expect((await current(bearer(await forged({ uid: "another" })))).status).toBe(401);
    expect((await current(bearer(await forged({ cred_ver: 1 })))).status).toBe(401);
  });

  it("the store decides: a role change refuses the tokens issued before, a deleted user's token stops working", async () => {
    const admin = basic("admin", ADMIN_PASSWORD);
    const created = await call("/api/users", {
      method: "POST",
      headers: { authorization: admin, "content-type": "application/json" },
      body: JSON.stringify({ username: "erin", email: "erin@example.test", password: "Er1n-Password" }),
    });
    expect(created.status).toBe(201);
    const { user_id: id } = (await created.json()) as { user_id: number };
    const setAdmin = (on: boolean) =>
      call(`/api/users/${id}/sysadmin`, {
        method: "PUT",
        headers: { authorization: admin, "content-type": "application/json" },
        body: JSON.stringify({ sysadmin_flag: on }),
      });
    expect((await setAdmin(true)).status).toBe(200);
    const t = await token(MANAGEMENT, basic("erin", "Er1n-Password"));
    expect((await call("/api/users", { headers: { authorization: bearer(t) } })).status).toBe(200);
    expect((await setAdmin(false)).status).toBe(200);
    expect((await call("/api/users", { headers: { authorization: bearer(t) } })).status).toBe(401);
    const after = await token(MANAGEMENT, basic("erin", "Er1n-Password"));
    expect((await call("/api/users", { headers: { authorization: bearer(after) } })).status).toBe(403);
    expect((await current(bearer(after))).status).toBe(200);
    expect((await call(`/api/users/${id}`, { method: "DELETE", headers: { authorization: admin } })).status).toBe(204);
    expect((await current(bearer(after))).status).toBe(401);
  });
});

describe("without our own token service there is no Bearer audience", () => {
  it("an external auth.token: no users API, nothing to wire", async () => {
    const ext = await mkdtemp(path.join(tmpdir(), "rk-users-bearer-ext-"));
    try {
      const bundle = path.join(ext, "bundle.pem");
      const { certificate } = await generatedKeys().exportPem();
      await (await import("node:fs/promises")).writeFile(bundle, certificate);
      const yaml = `version: 0.1\nstorage: {inmemory: {}}\nauth: {token: {realm: "http://tokens.test/token", service: reg, issuer: iss, rootcertbundle: ${bundle}}}\nregistrykit: {keydirectory: ${ext}/keys}\n`;
      const { config } = resolveConfig({ document: parseConfigText(yaml), cwd: ext });
      const external = await createAllInOne(config, { origin: ORIGIN });
      expect(external.info.users).toBeUndefined();
      expect(external.info.auth).toMatchObject({ mode: "token", external: true });
      await external.close();
    } finally {
      await rm(ext, { recursive: true, force: true });
    }
  });
});
