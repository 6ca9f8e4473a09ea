import { describe, expect, it } from "vitest";
import { createIdentityService } from "../../examples/identity-compute/src/identity.js";
import { defineCatalog } from "../../examples/identity-compute/src/catalog.js";
import { memoryTokenStore, newToken } from "../../examples/identity-compute/src/tokens.js";
import type { LogEvent } from "../../src/http/log.js";
import { credentials, DEMO_SCOPE, exampleApp, get, issue, ORIGIN, PASSWORDS, passwordBody, tokenRequest } from "./helpers.js";

const KEYSTONE_401 = { error: { code: 401, title: "Unauthorized", message: "The request you have made requires authentication." } };

describe("identity: version discovery", () => {
  it("GET /v3 is the v3.14 version document", async () => {
    const { identity } = await exampleApp();
    const res = await identity(get("/v3"));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.version).toMatchObject({ id: "v3.14", status: "stable", links: [{ rel: "self", href: `${ORIGIN}/v3/` }] });
    expect(body.version["media-types"][0]).toEqual({ base: "application/json", type: "application/vnd.openstack.identity-v3+json" });
    expect((await identity(get("/v3/"))).status).toBe(200);
  });

  it("GET / is keystone's 300 multiple-choice document", async () => {
    const { identity } = await exampleApp();
    const res = await identity(get("/"));
    expect(res.status).toBe(300);
    const body = await res.json();
    expect(body.versions.values).toHaveLength(1);
    expect(body.versions.values[0].id).toBe("v3.14");
  });

  it("honours a root below the origin and answers 404 outside it", async () => {
    const identity = createIdentityService({ checkCredentials: await credentials(), catalog: [], root: "/identity/" });
    const res = await identity(get("/identity/v3"));
    expect((await res.json()).version.links[0].href).toBe(`${ORIGIN}/identity/v3/`);
    expect((await identity(get("/v3"))).status).toBe(404);
  });
});

describe("identity: POST /v3/auth/tokens", () => {
  it("issues a project-scoped token with roles and the catalog", async () => {
    const { identity, project } = await exampleApp();
    const res = await identity(tokenRequest(passwordBody("demo", PASSWORDS.demo, DEMO_SCOPE)));
    expect(res.status).toBe(201);
    const token = res.headers.get("x-subject-token")!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()).token;
    expect(body.methods).toEqual(["password"]);
    expect(body.user).toMatchObject({ name: "demo", domain: { id: "default", name: "Default" } });
    expect(typeof body.user.id).toBe("string");
    expect(body.project).toEqual({ id: project.id, name: "demo", domain: { id: "default", name: "Default" } });
    expect(body.roles.map((r: { name: string }) => r.name).sort()).toEqual(["member", "reader"]);
    expect(body.audit_ids).toHaveLength(1);
    expect(body.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(Date.parse(body.expires_at) - Date.parse(body.issued_at)).toBe(3600_000);
    const types = body.catalog.map((s: { type: string }) => s.type).sort();
    expect(types).toEqual(["compute", "identity", "image"]);
    const compute = body.catalog.find((s: { type: string }) => s.type === "compute");
    expect(compute.name).toBe("nova");
    expect(compute.endpoints.map((e: { interface: string }) => e.interface).sort()).toEqual(["admin", "internal", "public"]);
    for (const e of compute.endpoints) {
      expect(e).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), interface: e.interface, region: "RegionOne", region_id: "RegionOne", url: `${ORIGIN}/compute/v2.1` });
    }
  });

  it("gives an administrator the admin role too", async () => {
    const { identity } = await exampleApp();
    const { body } = await issue(identity, "admin");
    expect(body.token.roles.map((r: { name: string }) => r.name)).toContain("admin");
  });

  it("issues an unscoped token without project, roles or catalog", async () => {
    const { identity } = await exampleApp();
    const { body } = await issue(identity, "demo", false);
    expect(body.token.user.name).toBe("demo");
    expect(body.token).not.toHaveProperty("project");
    expect(body.token).not.toHaveProperty("roles");
    expect(body.token).not.toHaveProperty("catalog");
  });

  it("scopes by project id, and leaves the catalog out with ?nocatalog", async () => {
    const { identity, project } = await exampleApp();
    const res = await identity(tokenRequest(passwordBody("demo", PASSWORDS.demo, { project: { id: project.id } }), { query: "?nocatalog" }));
    expect(res.status).toBe(201);
    const body = (await res.json()).token;
    expect(body.project.id).toBe(project.id);
    expect(body).not.toHaveProperty("catalog");
  });

  it("answers 401 in keystone's shape for a wrong password, an unknown user or a foreign domain", async () => {
    const { identity, logs } = await exampleApp();
    for (const body of [
      passwordBody("demo", "wrong-password", DEMO_SCOPE),
      passwordBody("nobody", "whatever", DEMO_SCOPE),
      passwordBody("demo", PASSWORDS.demo, DEMO_SCOPE, { name: "Other" }),
    ]) {
      const res = await identity(tokenRequest(body));
      expect(res.status).toBe(401);
      expect(res.headers.get("x-subject-token")).toBeNull();
      expect(res.headers.get("www-authenticate")).toBe(`Keystone uri="${ORIGIN}/v3"`);
      expect(await res.json()).toEqual(KEYSTONE_401);
    }
    expect(JSON.stringify(logs)).not.toContain("wrong-password");
    expect(JSON.stringify(logs)).not.toContain(PASSWORDS.demo);
  });

  it("answers 401 for an unknown project or one the user is not a member of", async () => {
    const { identity } = await exampleApp({ projects: [{ name: "demo" }, { name: "secret", members: ["admin"] }] });
    for (const scope of [{ project: { name: "nope", domain: { name: "Default" } } }, { project: { name: "secret", domain: { id: "default" } } }, { project: { id: "0".repeat(32) } }]) {
      const res = await identity(tokenRequest(passwordBody("demo", PASSWORDS.demo, scope)));
      expect(res.status).toBe(401);
    }
    const ok = await identity(tokenRequest(passwordBody("admin", PASSWORDS.admin, { project: { name: "secret", domain: { id: "default" } } })));
    expect(ok.status).toBe(201);
  });

  it("answers 400 for bad JSON and malformed bodies, naming the problem", async () => {
    const { identity } = await exampleApp();
    const bad = await identity(tokenRequest(undefined, { raw: "{not json" }));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: 400, title: "Bad Request" });
    const cases: [unknown, RegExp][] = [
      [[], /auth/],
      [{ auth: {} }, /identity/],
      [{ auth: { identity: { methods: "password" } } }, /methods/],
      [{ auth: { identity: { methods: ["password"] } } }, /password\.user/],
      [{ auth: { identity: { methods: ["password"], password: { user: { name: "demo", password: "x" } } } } }, /domain/],
      [{ auth: { identity: { methods: ["password"], password: { user: { name: 5, password: "x", domain: { name: "Default" } } } } } }, /user\.name/],
      [{ auth: { identity: { methods: ["password"], password: { user: { id: "abc", password: "x" } } } } }, /user\.name is required/],
      [{ ...passwordBody("demo", PASSWORDS.demo), auth: { ...passwordBody("demo", PASSWORDS.demo).auth, scope: { domain: { name: "Default" } } } }, /project scope/],
      [{ ...passwordBody("demo", PASSWORDS.demo), auth: { ...passwordBody("demo", PASSWORDS.demo).auth, scope: { project: { name: "demo" } } } }, /domain/],
    ];
    for (const [body, message] of cases) {
      const res = await identity(tokenRequest(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error.message).toMatch(message);
    }
  });

  it("answers 401 for an unsupported method, 413 for a large body, 415 for a non-JSON type, 405 for PUT", async () => {
    const { identity } = await exampleApp();
    const totp = await identity(tokenRequest({ auth: { identity: { methods: ["totp"], totp: {} } } }));
    expect(totp.status).toBe(401);
    const big = await identity(tokenRequest(undefined, { raw: JSON.stringify({ auth: { pad: "x".repeat(20_000) } }) }));
    expect(big.status).toBe(413);
    const text = await identity(tokenRequest(passwordBody("demo", PASSWORDS.demo), { headers: { "content-type": "text/plain" } }));
    expect(text.status).toBe(415);
    const put = await identity(new Request(`${ORIGIN}/v3/auth/tokens`, { method: "PUT" }));
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toContain("POST");
  });

  it("rescopes an unscoped token with the token method, keeping its expiry", async () => {
    const { identity } = await exampleApp();
    const first = await issue(identity, "demo", false);
    const res = await identity(tokenRequest({ auth: { identity: { methods: ["token"], token: { id: first.token } }, scope: DEMO_SCOPE } }));
    expect(res.status).toBe(201);
    const body = (await res.json()).token;
    expect(body.methods).toEqual(["token", "password"]);
    expect(body.project.name).toBe("demo");
    expect(body.expires_at).toBe(first.body.token.expires_at);
    expect(body.audit_ids[1]).toBe(first.body.token.audit_ids[0]);
    const bogus = await identity(tokenRequest({ auth: { identity: { methods: ["token"], token: { id: "A".repeat(43) } } } }));
    expect(bogus.status).toBe(401);
  });

  it("never logs passwords or token strings", async () => {
    const { identity, logs } = await exampleApp();
    const { token, body } = await issue(identity, "demo");
    const text = JSON.stringify(logs);
    expect(text).not.toContain(PASSWORDS.demo);
    expect(text).not.toContain(token);
    expect(logs).toContainEqual(expect.objectContaining({ msg: "token issued", user: "demo", audit_id: body.token.audit_ids[0] }));
  });
});

describe("identity: validating and revoking tokens", () => {
  it("GET validates the subject token and returns the same body; HEAD has no body", async () => {
    const { identity } = await exampleApp();
    const { token, body } = await issue(identity, "demo");
    const res = await identity(get("/v3/auth/tokens", { "x-auth-token": token, "x-subject-token": token }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-subject-token")).toBe(token);
    expect(await res.json()).toEqual(body);
    const head = await identity(get("/v3/auth/tokens", { "x-auth-token": token, "x-subject-token": token }, "HEAD"));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("401 without a valid caller token, 404 for an unknown subject, 400 without one", async () => {
    const { identity } = await exampleApp();
    const { token } = await issue(identity, "demo");
    expect((await identity(get("/v3/auth/tokens", { "x-subject-token": token }))).status).toBe(401);
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": "B".repeat(43), "x-subject-token": token }))).status).toBe(401);
    const unknown = await identity(get("/v3/auth/tokens", { "x-auth-token": token, "x-subject-token": "C".repeat(43) }));
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 404, title: "Not Found" });
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": token }))).status).toBe(400);
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": token, "x-subject-token": "C".repeat(43) }, "HEAD"))).status).toBe(404);
  });

  it("lets a user validate only their own tokens; an administrator any", async () => {
    const { identity } = await exampleApp();
    const demo = await issue(identity, "demo");
    const other = await issue(identity, "other");
    const admin = await issue(identity, "admin");
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": other.token, "x-subject-token": demo.token }))).status).toBe(403);
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": admin.token, "x-subject-token": demo.token }))).status).toBe(200);
  });

  it("DELETE revokes: 204, then the token is gone everywhere", async () => {
    const { identity, compute } = await exampleApp();
    const keep = await issue(identity, "demo");
    const { token } = await issue(identity, "demo");
    const del = await identity(new Request(`${ORIGIN}/v3/auth/tokens`, { method: "DELETE", headers: { "x-auth-token": keep.token, "x-subject-token": token } }));
    expect(del.status).toBe(204);
    expect(await identity.validateToken(token)).toBeUndefined();
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": keep.token, "x-subject-token": token }))).status).toBe(404);
    expect((await compute(get("/compute/v2.1/servers", { "x-auth-token": token }))).status).toBe(401);
    const again = await identity(new Request(`${ORIGIN}/v3/auth/tokens`, { method: "DELETE", headers: { "x-auth-token": keep.token, "x-subject-token": token } }));
    expect(again.status).toBe(404);
  });

  it("expires tokens after tokenTtlSeconds", async () => {
    let now = Date.UTC(2024, 0, 1);
    const identity = createIdentityService({ checkCredentials: await credentials(), catalog: [], tokenTtlSeconds: 60, now: () => now });
    const { token, body } = await issue(identity, "demo");
    expect(body.token.expires_at).toBe("2024-01-01T00:01:00.000000Z");
    now += 59_999;
    expect(await identity.validateToken(token)).toBeDefined();
    now += 1;
    expect(await identity.validateToken(token)).toBeUndefined();
    expect((await identity(get("/v3/auth/tokens", { "x-auth-token": token, "x-subject-token": token }))).status).toBe(401);
  });
});

describe("identity: catalog resources", () => {
  it("lists services and endpoints with id, region, service, enabled, interface and URL", async () => {
    const { identity, catalog } = await exampleApp();
    const { token } = await issue(identity, "demo");
    const eps = (await (await identity(get("/v3/endpoints?interface=public", { "x-auth-token": token }))).json()).endpoints;
    expect(eps).toHaveLength(3);
    const compute = catalog.find((s) => s.type === "compute")!;
    expect(eps).toContainEqual({
      id: compute.endpoints[0]!.id,
      interface: "public",
      region: "RegionOne",
      region_id: "RegionOne",
      service_id: compute.id,
      url: `${ORIGIN}/compute/v2.1`,
      enabled: true,
      links: { self: `${ORIGIN}/v3/endpoints/${compute.endpoints[0]!.id}` },
    });
    const svc = await (await identity(get(`/v3/services/${compute.id}`, { "x-auth-token": token }))).json();
    expect(svc.service).toMatchObject({ id: compute.id, type: "compute", name: "nova", enabled: true });
    const byType = await (await identity(get("/v3/services?type=image", { "x-auth-token": token }))).json();
    expect(byType.services.map((s: { name: string }) => s.name)).toEqual(["glance"]);
    expect((await identity(get("/v3/services/nope", { "x-auth-token": token }))).status).toBe(404);
    expect((await identity(get("/v3/endpoints"))).status).toBe(401);
    const unscoped = await issue(identity, "demo", false);
    expect((await identity(get("/v3/endpoints", { "x-auth-token": unscoped.token }))).status).toBe(403);
  });

  it("keeps disabled services out of tokens", async () => {
    const catalog = defineCatalog("R1", [
      { type: "compute", name: "nova", urls: { public: "http://a.test/v2.1" } },
      { type: "image", name: "glance", urls: { public: "http://b.test/" }, enabled: false },
    ]);
    const identity = createIdentityService({ checkCredentials: await credentials(), catalog });
    const { body } = await issue(identity, "demo");
    expect(body.token.catalog.map((s: { type: string }) => s.type)).toEqual(["compute"]);
    expect(body.token.catalog[0].endpoints[0].url).toBe("http://a.test/v2.1");
  });

  it("lists the projects a user may scope to", async () => {
    const { identity } = await exampleApp({ projects: [{ name: "demo" }, { name: "secret", members: ["admin"] }] });
    const { token } = await issue(identity, "demo", false);
    const body = await (await identity(get("/v3/auth/projects", { "x-auth-token": token }))).json();
    expect(body.projects.map((p: { name: string }) => p.name)).toEqual(["demo"]);
  });
});

describe("memoryTokenStore", () => {
  it("bounds the number of tokens, dropping expired and then the oldest", async () => {
    let now = 0;
    const store = memoryTokenStore({ maxTokens: 2, now: () => now });
    const rec = (expiresAt: number) => ({ methods: ["password"], user: { id: "u", name: "u", domain: { id: "d", name: "D" } }, admin: false, roles: [], issuedAt: 0, expiresAt, auditIds: ["a"] });
    const a = await store.issue(rec(10));
    const b = await store.issue(rec(1000));
    const c = await store.issue(rec(1000));
    expect(await store.get(a)).toBeUndefined();
    expect(await store.get(b)).toBeDefined();
    expect(await store.get(c)).toBeDefined();
    now = 20;
    const d = await store.issue(rec(1000));
    expect(await store.get(b)).toBeUndefined();
    expect(await store.get(d)).toBeDefined();
    expect(await store.revoke(d)).toBe(true);
    expect(await store.revoke(d)).toBe(false);
    expect(await store.get("not a token!")).toBeUndefined();
  });

  it("never issues a token that starts with '-' (a command line would take it for an option)", () => {
    // One draw in 64 starts with '-' before the redraw: 20,000 draws make a miss of the check all but impossible.
    const tokens = Array.from({ length: 20_000 }, newToken);
    expect(tokens.filter((t) => t.startsWith("-"))).toEqual([]);
    expect(tokens.every((t) => /^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/.test(t))).toBe(true);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it("logs nothing secret when refusing", async () => {
    const logs: LogEvent[] = [];
    const identity = createIdentityService({ checkCredentials: await credentials(), catalog: [], log: (e) => logs.push(e) });
    const { token } = await issue(identity, "demo");
    await identity(get("/v3/auth/tokens", { "x-auth-token": token, "x-subject-token": "D".repeat(43) }));
    expect(logs.some((l) => l.msg === "identity request refused")).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(token);
  });
});
