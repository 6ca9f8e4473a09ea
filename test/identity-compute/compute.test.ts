import { describe, expect, it } from "vitest";
import { createComputeService, type ServerRecord } from "../../examples/identity-compute/src/compute.js";
import { remoteTokenValidator } from "../../examples/identity-compute/src/auth.js";
import { requestedMicroversion } from "../../examples/identity-compute/src/microversion.js";
import type { TokenRecord } from "../../examples/identity-compute/src/tokens.js";
import { exampleApp, get, issue, ORIGIN } from "./helpers.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function setup() {
  const app = await exampleApp();
  const demo = await issue(app.identity, "demo");
  const auth = (extra: Record<string, string> = {}) => ({ "x-auth-token": demo.token, ...extra });
  return { ...app, demo, auth };
}

describe("compute: version documents", () => {
  it("GET / lists v2.1 with its microversion range; GET /v2.1 is the version document; no token needed", async () => {
    const { compute } = await setup();
    const root = await compute(get("/compute/"));
    expect(root.status).toBe(200);
    const versions = (await root.json()).versions;
    expect(versions).toEqual([
      expect.objectContaining({ id: "v2.1", status: "CURRENT", min_version: "2.1", version: "2.79", links: [{ rel: "self", href: `${ORIGIN}/compute/v2.1/` }] }),
    ]);
    const v = await compute(get("/compute/v2.1"));
    expect(v.status).toBe(200);
    expect((await v.json()).version).toMatchObject({ id: "v2.1", min_version: "2.1", version: "2.79" });
  });
});

describe("compute: GET /v2.1/servers", () => {
  it("lists the project's servers as the spec's instance list", async () => {
    const { compute, servers, auth } = await setup();
    const ok = await compute(get("/compute/v2.1/servers", auth()));
    expect(ok.status).toBe(200);
    const body = await ok.json();
    expect(Object.keys(body)).toEqual(["servers"]);
    expect(body.servers).toHaveLength(servers.length);
    for (const s of body.servers) {
      expect(Object.keys(s).sort()).toEqual(["id", "links", "name"]);
      expect(s.id).toMatch(UUID);
      expect(s.links).toEqual([
        { rel: "self", href: `${ORIGIN}/compute/v2.1/servers/${s.id}` },
        { rel: "bookmark", href: `${ORIGIN}/compute/servers/${s.id}` },
      ]);
    }
    expect(body.servers.map((s: { name: string }) => s.name).sort()).toEqual(servers.map((s) => s.name).sort());
  });

  it("GET /servers/detail gives full records; newest first", async () => {
    const { compute, auth, project } = await setup();
    const body = await (await compute(get("/compute/v2.1/servers/detail", auth()))).json();
    expect(body.servers.map((s: { name: string }) => s.name)).toEqual(["db-1", "web-2", "web-1"]);
    const web1 = body.servers[2];
    expect(web1).toMatchObject({
      id: "0b6e8a52-6f3c-4d6e-9c1a-5a4f2b7d9e10",
      name: "web-1",
      status: "ACTIVE",
      tenant_id: project.id,
      created: "2024-05-01T09:00:00Z",
      flavor: { id: "2" },
      image: { id: expect.stringMatching(UUID) },
      addresses: { private: [{ addr: "10.0.0.11", version: 4, "OS-EXT-IPS:type": "fixed" }] },
      metadata: { role: "web" },
      "OS-EXT-STS:vm_state": "active",
      "OS-EXT-STS:power_state": 1,
      "OS-EXT-AZ:availability_zone": "nova",
    });
    expect(body.servers[0].image).toBe(""); // booted from volume
    expect(body.servers[0]["OS-EXT-STS:power_state"]).toBe(4);
    expect(web1).not.toHaveProperty("OS-EXT-SRV-ATTR:host"); // administrators only
    expect(web1).not.toHaveProperty("locked"); // 2.9+
  });

  it("GET /servers/{id} shows one server; 404 for another's or an unknown one", async () => {
    const { compute, auth, servers } = await setup();
    const res = await compute(get(`/compute/v2.1/servers/${servers[0]!.id}`, auth()));
    expect(res.status).toBe(200);
    expect((await res.json()).server.name).toBe(servers[0]!.name);
    const missing = await compute(get("/compute/v2.1/servers/00000000-0000-0000-0000-000000000000", auth()));
    expect(missing.status).toBe(404);
    expect((await missing.json()).itemNotFound.code).toBe(404);
  });

  it("pages with limit and marker, with a next link", async () => {
    const { compute, auth } = await setup();
    const p1 = await (await compute(get("/compute/v2.1/servers?limit=2", auth()))).json();
    expect(p1.servers.map((s: { name: string }) => s.name)).toEqual(["db-1", "web-2"]);
    const next = new URL(p1.servers_links[0].href);
    expect(p1.servers_links[0].rel).toBe("next");
    const p2 = await (await compute(get(next.pathname + next.search, auth()))).json();
    expect(p2.servers.map((s: { name: string }) => s.name)).toEqual(["web-1"]);
    expect(p2).not.toHaveProperty("servers_links");
    expect((await compute(get("/compute/v2.1/servers?limit=abc", auth()))).status).toBe(400);
    const badMarker = await compute(get("/compute/v2.1/servers?marker=nope", auth()));
    expect(badMarker.status).toBe(400);
    expect((await badMarker.json()).badRequest.message).toMatch(/marker/);
  });

  it("filters by name, status, ip, and sorts on request; ignores unknown parameters", async () => {
    const { compute, auth } = await setup();
    const names = async (q: string) =>
      (await (await compute(get(`/compute/v2.1/servers/detail?${q}`, auth()))).json()).servers.map((s: { name: string }) => s.name);
    expect(await names("name=web")).toEqual(["web-2", "web-1"]);
    expect(await names("status=shutoff")).toEqual(["db-1"]);
    expect(await names("ip=10.0.0.1")).toEqual(["web-2", "web-1"]);
    expect(await names("ip6=fd00")).toEqual(["db-1"]);
    expect(await names("sort_key=display_name&sort_dir=asc")).toEqual(["db-1", "web-1", "web-2"]);
    expect(await names("deleted=False&reservation_id=x&is_public=None")).toHaveLength(3);
    expect((await compute(get("/compute/v2.1/servers?sort_key=nope", auth()))).status).toBe(400);
    expect((await compute(get("/compute/v2.1/servers?changes-since=garbage", auth()))).status).toBe(400);
  });

  it("all_tenants: 403 for a member, every project for an administrator", async () => {
    const other: ServerRecord = { id: "11111111-2222-4333-8444-555555555555", name: "elsewhere", projectId: "p2", flavorId: "1" };
    const { identity, servers, auth } = await setup();
    const compute = createComputeService({ validateToken: identity.validateToken, servers: [...servers, other], root: "/compute" });
    const refused = await compute(get("/compute/v2.1/servers?all_tenants=True", auth()));
    expect(refused.status).toBe(403);
    expect((await refused.json()).forbidden.code).toBe(403);
    const admin = await issue(identity, "admin");
    const all = await (await compute(get("/compute/v2.1/servers/detail?all_tenants=1", { "x-auth-token": admin.token }))).json();
    expect(all.servers.map((s: { name: string }) => s.name)).toContain("elsewhere");
    expect(all.servers[0]).toHaveProperty("OS-EXT-SRV-ATTR:host");
    const own = await (await compute(get("/compute/v2.1/servers", { "x-auth-token": admin.token }))).json();
    expect(own.servers.map((s: { name: string }) => s.name)).not.toContain("elsewhere");
  });

  it("reads servers from a function on every request", async () => {
    const { identity, project, auth } = await setup();
    const list: ServerRecord[] = [];
    const compute = createComputeService({ validateToken: identity.validateToken, servers: async () => list });
    expect((await (await compute(get("/v2.1/servers", auth()))).json()).servers).toEqual([]);
    list.push({ id: "11111111-2222-4333-8444-555555555555", name: "new", projectId: project.id, flavorId: "1" });
    expect((await (await compute(get("/v2.1/servers", auth()))).json()).servers).toHaveLength(1);
  });
});

describe("compute: tokens", () => {
  it("401 without a token or with an unknown one, in keystone's shape with WWW-Authenticate", async () => {
    const { compute } = await setup();
    const foreign = await setup(); // a token from another identity service is unknown here
    for (const headers of [{}, { "x-auth-token": "E".repeat(43) }, { "x-auth-token": "x".repeat(5000) }, foreign.auth()]) {
      const res = await compute(get("/compute/v2.1/servers", headers));
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(`Keystone uri="${ORIGIN}/v3"`);
      expect((await res.json()).error).toMatchObject({ code: 401, title: "Unauthorized" });
    }
  });

  it("403 with a JSON error for a token without project scope", async () => {
    const { compute, identity, logs } = await setup();
    const unscoped = await issue(identity, "demo", false);
    const res = await compute(get("/compute/v2.1/servers", { "x-auth-token": unscoped.token }));
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const body = await res.json();
    expect(body.forbidden).toMatchObject({ code: 403, message: expect.stringMatching(/project-scoped/) });
    expect(JSON.stringify(logs)).not.toContain(unscoped.token);
  });

  it("401 once the token has expired", async () => {
    let expired = false;
    const record: TokenRecord = {
      methods: ["password"],
      user: { id: "u", name: "u", domain: { id: "default", name: "Default" } },
      admin: false,
      project: { id: "p", name: "p", domain: { id: "default", name: "Default" } },
      roles: [],
      issuedAt: 0,
      expiresAt: 1,
      auditIds: ["a"],
    };
    const compute = createComputeService({ validateToken: async () => (expired ? undefined : record), servers: [] });
    expect((await compute(get("/v2.1/servers", { "x-auth-token": "t".repeat(43) }))).status).toBe(200);
    expired = true;
    expect((await compute(get("/v2.1/servers", { "x-auth-token": "t".repeat(43) }))).status).toBe(401);
  });

  it("405 for writes", async () => {
    const { compute, auth } = await setup();
    const res = await compute(new Request(`${ORIGIN}/compute/v2.1/servers`, { method: "POST", headers: auth(), body: "{}" }));
    expect(res.status).toBe(405);
  });
});

describe("compute: microversions", () => {
  it("defaults to 2.1 and echoes it in both headers", async () => {
    const { compute, auth } = await setup();
    const res = await compute(get("/compute/v2.1/servers", auth()));
    expect(res.headers.get("openstack-api-version")).toBe("compute 2.1");
    expect(res.headers.get("x-openstack-nova-api-version")).toBe("2.1");
    expect(res.headers.get("vary")).toMatch(/OpenStack-API-Version/);
  });

  it("answers the version asked for in either header, and latest", async () => {
    const { compute, auth } = await setup();
    const cases: [Record<string, string>, string][] = [
      [{ "x-openstack-nova-api-version": "2.47" }, "2.47"],
      [{ "openstack-api-version": "compute 2.26" }, "2.26"],
      [{ "openstack-api-version": "image 2.5, compute 2.9" }, "2.9"],
      [{ "openstack-api-version": "compute latest" }, "2.79"],
      [{ "openstack-api-version": "compute 2.3", "x-openstack-nova-api-version": "2.60" }, "2.3"],
    ];
    for (const [headers, want] of cases) {
      const res = await compute(get("/compute/v2.1/servers/detail", auth(headers)));
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.headers.get("openstack-api-version")).toBe(`compute ${want}`);
      expect(res.headers.get("x-openstack-nova-api-version")).toBe(want);
    }
  });

  it("shapes server records by microversion", async () => {
    const { compute, auth } = await setup();
    const at = async (v: string) =>
      (await (await compute(get("/compute/v2.1/servers/detail?name=web-1", auth({ "openstack-api-version": `compute ${v}` })))).json()).servers[0];
    const v247 = await at("2.47");
    expect(v247.flavor).toEqual({ vcpus: 1, ram: 2048, disk: 20, ephemeral: 0, swap: 0, original_name: "m1.small", extra_specs: {} });
    expect(v247.locked).toBe(false);
    expect(v247.tags).toEqual([]);
    expect(v247).toHaveProperty("description");
    const v21 = await at("2.1");
    expect(v21.flavor.id).toBe("2");
    expect(v21).not.toHaveProperty("tags");
  });

  it("400 for a malformed version, 406 outside 2.1–2.79", async () => {
    const { compute, auth } = await setup();
    const bad = await compute(get("/compute/v2.1/servers", auth({ "openstack-api-version": "compute two" })));
    expect(bad.status).toBe(400);
    expect((await bad.json()).badRequest.message).toMatch(/invalid format/);
    for (const v of ["2.80", "2.0", "3.1"]) {
      const res = await compute(get("/compute/v2.1/servers", auth({ "x-openstack-nova-api-version": v })));
      expect(res.status, v).toBe(406);
      expect(JSON.stringify(await res.json())).toMatch(/Minimum is 2.1 and maximum is 2.79/);
    }
  });

  it("parses the headers", () => {
    expect(requestedMicroversion(new Headers())).toEqual({ kind: "default" });
    expect(requestedMicroversion(new Headers({ "openstack-api-version": "volume 3.1" }))).toEqual({ kind: "default" });
    expect(requestedMicroversion(new Headers({ "openstack-api-version": "COMPUTE 2.10" }))).toEqual({ kind: "version", version: { major: 2, minor: 10 } });
    expect(requestedMicroversion(new Headers({ "x-openstack-nova-api-version": "Latest" }))).toEqual({ kind: "latest" });
    expect(requestedMicroversion(new Headers({ "x-openstack-nova-api-version": "2.x" }))).toEqual({ kind: "invalid", text: "2.x" });
  });
});

describe("compute: flavors", () => {
  it("lists flavors and shows one", async () => {
    const { compute, auth } = await setup();
    const list = await (await compute(get("/compute/v2.1/flavors/detail?is_public=None", auth()))).json();
    expect(list.flavors.map((f: { name: string }) => f.name)).toEqual(["m1.tiny", "m1.small", "m1.medium"]);
    expect(list.flavors[1]).toMatchObject({ id: "2", vcpus: 1, ram: 2048, disk: 20 });
    expect((await (await compute(get("/compute/v2.1/flavors/3", auth()))).json()).flavor.name).toBe("m1.medium");
    expect((await compute(get("/compute/v2.1/flavors/99", auth()))).status).toBe(404);
  });
});

describe("remoteTokenValidator", () => {
  it("validates through GET /v3/auth/tokens with a service token, as a compute service in another process would", async () => {
    const { identity, project, servers } = await exampleApp();
    const service = await issue(identity, "admin");
    const demo = await issue(identity, "demo");
    const seen: Request[] = [];
    const validateToken = remoteTokenValidator({
      identityUrl: `${ORIGIN}/v3`,
      serviceToken: () => service.token,
      fetch: async (input, init) => {
        const request = new Request(input, init);
        seen.push(request);
        return identity(request);
      },
    });
    const record = await validateToken(demo.token);
    expect(record).toMatchObject({ user: { name: "demo" }, project: { id: project.id } });
    expect(seen[0]!.headers.get("x-auth-token")).toBe(service.token);
    expect(await validateToken("F".repeat(43))).toBeUndefined();
    const compute = createComputeService({ validateToken, servers });
    const res = await compute(get("/v2.1/servers", { "x-auth-token": demo.token }));
    expect((await res.json()).servers).toHaveLength(servers.length);
  });
});
