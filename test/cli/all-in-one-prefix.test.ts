/**
 * `http.prefix` in the all-in-one server: every route (the registry, the token
 * service and its JWKS, the users API and its administration routes, the web
 * page) moves under the prefix, as every route of Distribution does; so do the
 * challenge's realm and every `Location` and `Link`. `/` stays the liveness
 * route; anything else outside the prefix is 404.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { FAST } from "../users/helpers.js";

const ORIGIN = "http://registry.test:5000";
const P = "/my/registry";
const ADMIN = { name: "admin", password: "Adm1nPassword" };
const basic = `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString("base64")}`;

let dir: string;
let app: AllInOne;
const call = (p: string, init: RequestInit = {}) => app.handler(new Request(new URL(p, ORIGIN), init));

async function token(scope: string): Promise<string> {
  const res = await call(`${P}/service/token?service=registry-kit&scope=${encodeURIComponent(scope)}`, { headers: { authorization: basic } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-prefix-"));
  const yaml = `version: 0.1
http: {addr: "127.0.0.1:5000", prefix: "${P}/"}
storage: {inmemory: {}, delete: {enabled: true}}
auth: {token: {service: registry-kit, issuer: registry-kit}}
registrykit:
  keydirectory: ${dir}/keys
  tokenservice: {}
  users: {admin: {password: ${ADMIN.password}}}
  ui: {}
`;
  const { config } = resolveConfig({ document: parseConfigText(yaml), env: {}, cwd: dir });
  expect(config.http.prefix).toBe(P);
  app = await createAllInOne(config, { origin: ORIGIN, storage: memoryStorage(), scrypt: FAST });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the all-in-one server with http.prefix", () => {
  it("describes every path under the prefix", () => {
    expect(app.info).toMatchObject({
      registryPath: `${P}/v2/`,
      auth: { mode: "token", realm: `${ORIGIN}${P}/service/token` },
      tokenService: { path: `${P}/service/token` },
      users: { path: `${P}/api/users` },
      ui: { path: `${P}/ui/` },
    });
  });

  it("challenges at <prefix>/v2/ with the realm under the prefix", async () => {
    const res = await call(`${P}/v2/`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="${ORIGIN}${P}/service/token",service="registry-kit"`);
    const scoped = await call(`${P}/v2/team/app/tags/list`);
    expect(scoped.headers.get("www-authenticate")).toBe(`Bearer realm="${ORIGIN}${P}/service/token",service="registry-kit",scope="repository:team/app:pull"`);
  });

  it("pushes and pages under the prefix, every Location and Link there", async () => {
    const auth = { authorization: `Bearer ${await token("repository:team/app:pull,push")}` };
    const start = await call(`${P}/v2/team/app/blobs/uploads/`, { method: "POST", headers: auth });
    expect(start.status).toBe(202);
    const session = new URL(start.headers.get("location")!);
    expect(session.origin + session.pathname).toMatch(new RegExp(`^${ORIGIN}${P}/v2/team/app/blobs/uploads/[0-9a-f-]{36}$`));
    const config = new TextEncoder().encode("{}");
    session.searchParams.set("digest", "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    const put = await call(session.href, { method: "PUT", body: config, headers: { ...auth, "content-type": "application/octet-stream" } });
    expect(put.status).toBe(201);
    expect(put.headers.get("location")).toBe(`${ORIGIN}${P}/v2/team/app/blobs/sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a`);
    const manifest = JSON.stringify({
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", size: 2 },
      layers: [],
    });
    for (const tag of ["v1", "v2"]) {
      const res = await call(`${P}/v2/team/app/manifests/${tag}`, { method: "PUT", body: manifest, headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" } });
      expect(res.status).toBe(201);
      expect(res.headers.get("location")).toMatch(new RegExp(`^${ORIGIN}${P}/v2/team/app/manifests/sha256:[0-9a-f]{64}$`));
    }
    const tags = await call(`${P}/v2/team/app/tags/list?n=1`, { headers: auth });
    expect(tags.headers.get("link")).toBe(`<${P}/v2/team/app/tags/list?n=1&last=v1>; rel="next"`);
  });

  it("serves the JWKS, the users API, its administration routes and the web page under the prefix", async () => {
    expect((await call(`${P}/.well-known/jwks.json`)).status).toBe(200);
    const current = await call(`${P}/api/users/current`, { headers: { authorization: basic } });
    expect(current.status).toBe(200);
    expect(await current.json()).toMatchObject({ username: "admin" });
    expect((await call(`${P}/api/quotas`, { headers: { authorization: basic } })).status).toBe(200);
    const ui = await call(`${P}/ui/`);
    expect(ui.status).toBe(303);
    expect(ui.headers.get("location")).toBe(`${P}/ui/sign-in?next=${encodeURIComponent(`${P}/ui/`)}`);
  });

  it("lets the web page read the registry under the prefix", async () => {
    const signIn = await call(`${P}/ui/sign-in`, {
      method: "POST", body: new URLSearchParams({ username: ADMIN.name, password: ADMIN.password }), headers: { origin: ORIGIN },
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("set-cookie")).toContain(`Path=${P}/ui/`);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const list = await call(`${P}/ui/`, { headers: { cookie } });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain(`href="${P}/ui/repository?name=team%2Fapp"`);
    const repo = await call(`${P}/ui/repository?name=team%2Fapp`, { headers: { cookie } });
    expect(repo.status).toBe(200);
    expect(await repo.text()).toContain("v2");
  });

  it("answers / with 200 and nothing else outside the prefix", async () => {
    const alive = await call("/");
    expect(alive.status).toBe(200);
    expect(alive.headers.get("cache-control")).toBe("no-cache");
    expect(await alive.text()).toBe("");
    for (const p of ["/v2/", "/v2/team/app/tags/list", "/service/token", "/.well-known/jwks.json", "/api/users/current", "/api/quotas", "/ui/", "/my", P, `${P}/`, "/my/registryx/v2/"]) {
      expect((await call(p, { headers: { authorization: basic } })).status, p).toBe(404);
    }
  });
});

describe("http.prefix in a hand-built AllInOneConfig", () => {
  it("drops a trailing slash, as the config reader does", async () => {
    const { config } = resolveConfig({ document: parseConfigText(`version: 0.1\nstorage: {inmemory: {}}\nhttp: {secret: s}\n`), env: {}, cwd: "/srv" });
    const built = await createAllInOne({ ...config, http: { ...config.http, prefix: "/hand/made/" } }, { storage: memoryStorage() });
    try {
      expect(built.info.registryPath).toBe("/hand/made/v2/");
      const post = await built.handler(new Request(`${ORIGIN}/hand/made/v2/team/app/blobs/uploads/`, { method: "POST" }));
      expect(post.status).toBe(202);
      expect(new URL(post.headers.get("location")!).pathname).toMatch(/^\/hand\/made\/v2\/team\/app\/blobs\/uploads\/[0-9a-f-]{36}$/);
    } finally {
      await built.close();
    }
  });
});

describe("http.prefix in the config", () => {
  const prefixOf = (value: string) => resolveConfig({ document: parseConfigText(`version: 0.1\nstorage: {inmemory: {}}\nhttp: {prefix: "${value}"}\n`), env: {}, cwd: "/srv" }).config.http.prefix;

  it("takes Distribution's /path/ form, without the trailing slash too, and / or empty as none", () => {
    expect(prefixOf("/my/registry/")).toBe(P);
    expect(prefixOf("/my/registry")).toBe(P);
    expect(prefixOf("/")).toBeUndefined();
    expect(prefixOf("")).toBeUndefined();
    expect(resolveConfig({ document: parseConfigText("version: 0.1\nstorage: {inmemory: {}}\n"), env: { REGISTRY_HTTP_PREFIX: "/env/" }, cwd: "/srv" }).config.http.prefix).toBe("/env");
  });

  it.each(["my/registry/", "/a b/", "/a//b/", "/a/../b", "/a?b", "/ä/"])("refuses %j with the key's name (Distribution starts and answers 404 to everything)", (value) => {
    expect(() => prefixOf(value)).toThrow(ConfigError);
    expect(() => prefixOf(value)).toThrow(/http\.prefix/);
  });
});
