import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig, type AllInOneConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

const ORIGIN = "http://registry.test:5000";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-aio-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function config(yaml: string | undefined, env: Record<string, string> = {}): AllInOneConfig {
  return resolveConfig({ document: yaml === undefined ? undefined : parseConfigText(yaml), env, cwd: dir }).config;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const get = (app: AllInOne, p: string, headers: Record<string, string> = {}) => app.handler(new Request(`${ORIGIN}${p}`, { headers }));

async function token(app: AllInOne, scope: string, auth?: string): Promise<string> {
  const res = await get(app, `/service/token?service=registry-kit&scope=${encodeURIComponent(scope)}`, auth ? { authorization: auth } : {});
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

describe("createAllInOne with the built-in defaults", () => {
  let app: AllInOne;
  beforeAll(async () => {
    app = await createAllInOne(config(undefined, { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }), {
      origin: ORIGIN,
      storage: memoryStorage(),
    });
  });

  it("describes what it serves", () => {
    expect(app.info).toMatchObject({
      registryPath: "/v2/",
      auth: { mode: "token", realm: `${ORIGIN}/service/token`, service: "registry-kit", issuer: "registry-kit", external: false },
      tokenService: { path: "/service/token", keyCreated: true },
      users: { path: "/api/users" },
      admin: { username: "admin" },
      uploadSecret: { source: "file", created: true },
    });
    expect(app.info.admin?.password).toBeUndefined();
    expect(app.info.tokenService?.kid).toMatch(/^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
  });

  it("answers /v2/ with a challenge pointing at its own token service", async () => {
    const res = await get(app, "/v2/");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="${ORIGIN}/service/token",service="registry-kit"`);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("issues the administrator a token the registry accepts", async () => {
    const t = await token(app, "repository:team/app:pull,push", basic("admin", "Adm1nPassword"));
    expect((await get(app, "/v2/", { authorization: `Bearer ${t}` })).status).toBe(200);
    const tags = await get(app, "/v2/team/app/tags/list", { authorization: `Bearer ${t}` });
    expect(tags.status).toBe(404); // authorized; the repository just does not exist
  });

  it("refuses wrong credentials at the token service", async () => {
    const res = await get(app, "/service/token?service=registry-kit&scope=repository:a:pull", { authorization: basic("admin", "wrong") });
    expect(res.status).toBe(401);
  });

  it("serves the management API under /api/users", async () => {
    const res = await get(app, "/api/users/current", { authorization: basic("admin", "Adm1nPassword") });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ username: "admin" });
    expect((await get(app, "/api/users")).status).toBe(401);
  });

  it("answers / with 200 and no body (Distribution's liveness route), other paths with 404", async () => {
    const alive = await get(app, "/");
    expect(alive.status).toBe(200);
    expect(await alive.text()).toBe("");
    for (const p of ["/v2x", "/service/token/extra", "/api/userz", "/api"]) expect((await get(app, p)).status, p).toBe(404);
  });

  it("keeps the signing key (0600) and the upload secret in the key directory", async () => {
    const keys = path.join(dir, "keys");
    expect((await stat(path.join(keys, "token-signing-key.pem"))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(keys, "upload-secret"))).mode & 0o777).toBe(0o600);
    expect(await readFile(path.join(keys, "token-signing-cert.pem"), "utf8")).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it("reuses the key, the secret and the users on the next start", async () => {
    const storage = memoryStorage();
    const cfg = config(undefined, { REGISTRY_KIT_DATA: dir });
    const first = await createAllInOne(cfg, { origin: ORIGIN, storage });
    expect(first.info.admin?.password).toMatch(/^[A-Za-z0-9_-]{24}$/); // new store: generated password
    const again = await createAllInOne(cfg, { origin: ORIGIN, storage });
    expect(again.info.tokenService).toMatchObject({ kid: app.info.tokenService?.kid, keyCreated: false });
    expect(again.info.uploadSecret.created).toBe(false);
    expect(again.info.admin).toBeUndefined();
  });
});

describe("createAllInOne with a Distribution config", () => {
  it("verifies an external token service's tokens with auth.token.rootcertbundle and serves no token service", async () => {
    // Use the first suite's certificate as the "external" issuer's bundle.
    const own = await createAllInOne(config(undefined, { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }), {
      origin: ORIGIN, storage: memoryStorage(),
    });
    const t = await token(own, "repository:x:pull", basic("admin", "Adm1nPassword"));
    const bundle = path.join(dir, "keys", "token-signing-cert.pem");
    const external = await createAllInOne(config(`
storage: {inmemory: {}}
http: {secret: abc}
auth: {token: {realm: "https://auth.example/token", service: registry-kit, issuer: registry-kit, rootcertbundle: ${bundle}}}
`));
    expect(external.info.auth).toMatchObject({ mode: "token", external: true, realm: "https://auth.example/token" });
    expect(external.info.tokenService).toBeUndefined();
    expect(external.info.uploadSecret).toEqual({ source: "config", created: false });
    expect((await get(external, "/v2/")).headers.get("www-authenticate")).toContain('realm="https://auth.example/token"');
    expect((await get(external, "/v2/", { authorization: `Bearer ${t}` })).status).toBe(200);
    expect((await get(external, "/service/token")).status).toBe(404);
    expect((await get(external, "/api/users")).status).toBe(404);
  });

  it("runs an open registry when no auth is configured, and adds http.headers", async () => {
    const app = await createAllInOne(config(`
storage: {inmemory: {}}
http: {secret: abc, headers: {X-Frame-Options: [DENY], Docker-Distribution-Api-Version: [ignored]}}
`));
    const res = await get(app, "/v2/");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
    expect(app.info.auth).toEqual({ mode: "none" });
  });

  it("sends Strict-Transport-Security on https responses only (issue 41, item 13)", async () => {
    const app = await createAllInOne(config(`
storage: {inmemory: {}}
http: {secret: abc, tls: {certificate: /c, key: /k}}
`));
    const https = await app.handler(new Request("https://registry.test/v2/"));
    expect(https.headers.get("strict-transport-security")).toBe("max-age=31536000");
    expect((await app.handler(new Request("https://registry.test/nowhere"))).headers.get("strict-transport-security")).toBe("max-age=31536000");
    expect((await get(app, "/v2/")).headers.get("strict-transport-security")).toBeNull();
    const own = await createAllInOne(config(`
storage: {inmemory: {}}
http: {secret: abc, tls: {certificate: /c, key: /k}, headers: {Strict-Transport-Security: [max-age=5]}}
`));
    expect((await own.handler(new Request("https://registry.test/v2/"))).headers.get("strict-transport-security")).toBe("max-age=5");
    await app.close();
    await own.close();
  });

  it("honours the registrykit paths, http.host for the realm, and public repositories", async () => {
    const app = await createAllInOne(config(`
storage: {inmemory: {}}
http: {secret: abc, host: "https://registry.example.com"}
registrykit:
  keydirectory: ${path.join(dir, "keys2")}
  tokenservice: {path: /auth/token, publicrepositories: ["library/*"]}
  users: {prefix: /manage}
`, { REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }));
    expect(app.info.auth).toMatchObject({ realm: "https://registry.example.com/auth/token" });
    const anon = await get(app, "/auth/token?service=registry-kit&scope=repository:library/alpine:pull");
    const t = ((await anon.json()) as { token: string }).token;
    // Anonymous pull of a public repository is authorized (404: it does not exist yet).
    expect((await get(app, "/v2/library/alpine/tags/list", { authorization: `Bearer ${t}` })).status).toBe(404);
    expect((await get(app, "/v2/private/x/tags/list", { authorization: `Bearer ${t}` })).status).toBe(401);
    expect((await get(app, "/manage/users/current", { authorization: basic("admin", "Adm1nPassword") })).status).toBe(200);
  });

  it("stops on an administrator password that breaks the password policy, without echoing it", async () => {
    await expect(createAllInOne(config(undefined, { REGISTRY_KIT_DATA: path.join(dir, "d3"), REGISTRY_KIT_ADMIN_PASSWORD: "short" }), {
      storage: memoryStorage(),
    })).rejects.toThrow(/password/);
  });

  it("fails clearly when the root certificate bundle is missing", async () => {
    await expect(createAllInOne(config(`
storage: {inmemory: {}}
http: {secret: abc}
auth: {token: {realm: "https://a.example/t", service: s, issuer: i, rootcertbundle: /nonexistent/bundle.pem}}
`))).rejects.toThrow(/bundle\.pem/);
  });
});
