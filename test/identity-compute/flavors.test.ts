/**
 * The compute service's flavor routes, called directly: list, detail, show,
 * extra specs, nova's query parameters and the microversion-dependent fields
 * (2.55 `description`, 2.61 `extra_specs`, 2.75 `swap`).
 */
import { describe, expect, it } from "vitest";
import { createComputeService, DEFAULT_FLAVORS, type FlavorRecord } from "../../examples/identity-compute/src/compute.js";
import { exampleApp, get, issue, ORIGIN } from "./helpers.js";

async function setup(user: "demo" | "admin" = "demo") {
  const app = await exampleApp();
  const { token } = await issue(app.identity, user);
  const call = (path: string, headers: Record<string, string> = {}) =>
    app.compute(get(`/compute/v2.1${path}`, { "x-auth-token": token, ...headers }));
  const body = async (path: string, headers: Record<string, string> = {}) => {
    const res = await call(path, headers);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  return { ...app, token, call, body };
}

const mv = (v: string) => ({ "openstack-api-version": `compute ${v}` });

describe("compute flavors: GET /v2.1/flavors and /flavors/detail", () => {
  it("lists id, name and links; the detail adds nova's fields, in flavor id order", async () => {
    const { body } = await setup();
    const list = await body("/flavors");
    expect(Object.keys(list)).toEqual(["flavors"]);
    expect(list.flavors).toEqual(
      DEFAULT_FLAVORS.map((f) => ({
        id: f.id,
        name: f.name,
        links: [
          { rel: "self", href: `${ORIGIN}/compute/v2.1/flavors/${f.id}` },
          { rel: "bookmark", href: `${ORIGIN}/compute/flavors/${f.id}` },
        ],
      })),
    );
    const detail = await body("/flavors/detail?is_public=True");
    expect(detail.flavors.map((f: { name: string }) => f.name)).toEqual(["m1.tiny", "m1.small", "m1.medium"]);
    expect(detail.flavors[0]).toEqual({
      id: "1",
      name: "m1.tiny",
      links: list.flavors[0].links,
      vcpus: 1,
      ram: 512,
      disk: 1,
      "OS-FLV-EXT-DATA:ephemeral": 0,
      swap: "",
      rxtx_factor: 1,
      "OS-FLV-DISABLED:disabled": false,
      "os-flavor-access:is_public": true,
    });
  });

  it("2.55 adds description, 2.61 extra_specs (as openstacksdk asks), 2.75 swap 0", async () => {
    const { body } = await setup();
    const at61 = (await body("/flavors/detail?is_public=None", mv("2.61"))).flavors;
    expect(at61.map((f: { extra_specs: unknown }) => f.extra_specs)).toEqual([{}, {}, { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" }]);
    expect(at61[0]).toMatchObject({ description: null, swap: "" });
    expect((await body("/flavors", mv("2.55"))).flavors[0]).toHaveProperty("description", null);
    expect((await body("/flavors/1", mv("2.54"))).flavor).not.toHaveProperty("description");
    expect((await body("/flavors/1", mv("2.60"))).flavor).not.toHaveProperty("extra_specs");
    expect((await body("/flavors/1", mv("2.75"))).flavor.swap).toBe(0);
    expect((await body("/flavors/1", mv("2.74"))).flavor.swap).toBe("");
  });

  it("filters by minRam and minDisk, sorts, pages with limit and marker and a next link", async () => {
    const { body, call } = await setup();
    const names = async (q: string) => (await body(`/flavors?${q}`)).flavors.map((f: { name: string }) => f.name);
    expect(await names("minRam=2048")).toEqual(["m1.small", "m1.medium"]);
    expect(await names("minDisk=21")).toEqual(["m1.medium"]);
    expect(await names("sort_key=memory_mb&sort_dir=desc")).toEqual(["m1.medium", "m1.small", "m1.tiny"]);
    expect(await names("marker=1")).toEqual(["m1.small", "m1.medium"]);
    const page = await body("/flavors/detail?is_public=True&limit=2");
    expect(page.flavors.map((f: { id: string }) => f.id)).toEqual(["1", "2"]);
    expect(page.flavors_links).toEqual([{ rel: "next", href: `${ORIGIN}/compute/v2.1/flavors/detail?is_public=True&limit=2&marker=2` }]);
    expect((await body("/flavors?limit=3")).flavors_links).toBeUndefined();
    for (const [q, message] of [
      ["marker=99", "marker [99] not found"],
      ["limit=x", "limit param must be an integer"],
      ["minRam=lots", "Invalid minRam filter [lots]"],
      ["sort_key=colour", "Invalid input for query parameters sort_key. Value: colour."],
      ["sort_dir=up", "Invalid input for query parameters sort_dir. Value: up."],
    ]) {
      const res = await call(`/flavors?${q}`);
      expect(res.status, q).toBe(400);
      expect(await res.json(), q).toEqual({ badRequest: { code: 400, message } });
    }
  });

  it("is_public: an administrator's false lists no flavor (all are public), none and true all; a member's is ignored", async () => {
    const admin = await setup("admin");
    const count = async (s: typeof admin, q: string) => (await s.body(`/flavors?is_public=${q}`)).flavors.length;
    expect(await count(admin, "false")).toBe(0);
    expect(await count(admin, "None")).toBe(3);
    expect(await count(admin, "True")).toBe(3);
    const bad = await admin.call("/flavors?is_public=maybe");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ badRequest: { code: 400, message: "Invalid is_public filter [maybe]" } });
    const demo = await setup("demo");
    expect(await count(demo, "false")).toBe(3);
  });
});

describe("compute flavors: GET /v2.1/flavors/{id} and extra specs", () => {
  it("shows one flavor; 404 in nova's shape for an unknown one", async () => {
    const { body, call } = await setup();
    expect((await body("/flavors/3")).flavor).toMatchObject({ id: "3", name: "m1.medium", vcpus: 2, ram: 4096, disk: 40 });
    const missing = await call("/flavors/m1.tiny");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ itemNotFound: { code: 404, message: "Flavor m1.tiny could not be found." } });
  });

  it("GET /flavors/{id}/os-extra_specs lists them ({} when none), with the microversion echoed", async () => {
    const { call, body } = await setup();
    expect(await body("/flavors/1/os-extra_specs")).toEqual({ extra_specs: {} });
    const res = await call("/flavors/3/os-extra_specs", mv("2.61"));
    expect(res.status).toBe(200);
    expect(res.headers.get("openstack-api-version")).toBe("compute 2.61");
    expect(await res.json()).toEqual({ extra_specs: { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" } });
    const unknown = await call("/flavors/99/os-extra_specs");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ itemNotFound: { code: 404, message: "Flavor 99 could not be found." } });
  });

  it("GET /flavors/{id}/os-extra_specs/{key} shows one (key percent-decoded); 404 for a missing key or a deeper path", async () => {
    const { call, body } = await setup();
    expect(await body("/flavors/3/os-extra_specs/hw:cpu_policy")).toEqual({ "hw:cpu_policy": "shared" });
    expect(await body("/flavors/3/os-extra_specs/hw%3Acpu_policy")).toEqual({ "hw:cpu_policy": "shared" });
    const missing = await call("/flavors/3/os-extra_specs/toString");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ itemNotFound: { code: 404, message: "Flavor 3 has no extra specs with key toString." } });
    expect((await call("/flavors/3/os-extra_specs/%E0%A4%A")).status).toBe(404);
    expect((await call("/flavors/3/os-extra_specs/hw:cpu_policy/more")).status).toBe(404);
    expect((await call("/flavors/3/os-access")).status).toBe(404);
  });

  it("needs a token; writes are 405", async () => {
    const { compute, token } = await setup();
    expect((await compute(get("/compute/v2.1/flavors/1/os-extra_specs"))).status).toBe(401);
    const post = await compute(
      new Request(`${ORIGIN}/compute/v2.1/flavors/1/os-extra_specs`, { method: "POST", headers: { "x-auth-token": token }, body: "{}" }),
    );
    expect(post.status).toBe(405);
  });

  it("configured flavors: their extra specs are embedded in servers from 2.47", async () => {
    const app = await exampleApp();
    const { token } = await issue(app.identity, "demo");
    const flavors: FlavorRecord[] = [{ id: "g1", name: "gpu", vcpus: 8, ram: 65536, disk: 100, swap: 1024, description: "one GPU", extraSpecs: { "pci_passthrough:alias": "a1:1" } }];
    const compute = createComputeService({
      validateToken: app.identity.validateToken,
      servers: [{ id: "11111111-2222-4333-8444-555555555555", name: "trainer", projectId: app.project.id, flavorId: "g1" }],
      flavors,
      root: "/compute",
    });
    const auth = { "x-auth-token": token };
    const server = (await (await compute(get("/compute/v2.1/servers/detail", { ...auth, ...mv("2.47") }))).json()).servers[0];
    expect(server.flavor).toEqual({ vcpus: 8, ram: 65536, disk: 100, ephemeral: 0, swap: 1024, original_name: "gpu", extra_specs: { "pci_passthrough:alias": "a1:1" } });
    const shown = (await (await compute(get("/compute/v2.1/flavors/g1", { ...auth, ...mv("2.61") }))).json()).flavor;
    expect(shown).toMatchObject({ swap: 1024, description: "one GPU", extra_specs: { "pci_passthrough:alias": "a1:1" } });
  });
});
