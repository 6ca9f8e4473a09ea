/**
 * The real `openstack` client (python-openstackclient, with keystoneauth1,
 * novaclient and openstacksdk underneath) against the identity + compute
 * example on 127.0.0.1: version discovery, password authentication with
 * project scope, the catalog, `token issue`, `server list [--long]`,
 * `flavor list` / `flavor show`, a microversion, the administrator's commands
 * the example prints (run with its `OS_*` environment), and the 401/403 paths
 * as the client reports them.
 *
 * The CLI runs with an isolated HOME (no clouds.yaml, no cache) and no OS_*
 * variables from the environment. When `openstack` is missing this test
 * fails; it never skips.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_FLAVORS } from "../../examples/identity-compute/src/compute.js";
import { openstackEnv, startExample, SUGGESTED_COMMANDS, type RunningExample } from "../../examples/identity-compute/server.js";
import { describeRun, requireTool, run, tempDir, type RunResult } from "./helpers/process.js";

function openstackBinary(): string {
  try {
    return requireTool("openstack");
  } catch (e) {
    throw new Error(`the openstack CLI is missing: install python3-openstackclient (apt-get install -y python3-openstackclient)\n${String(e)}`);
  }
}

const CLI_TIMEOUT_MS = 90_000;

describe("openstack CLI against the identity + compute example", () => {
  const bin = openstackBinary();
  let example: RunningExample;
  let home: { path: string; remove(): void };

  beforeAll(async () => {
    home = tempDir("openstack");
    example = await startExample({ demoPassword: "demo-interop-pw", adminPassword: "admin-interop-pw" });
  });

  afterAll(async () => {
    await example?.close();
    home?.remove();
  });

  /** Run `openstack` with the example's auth options (overridable) and a clean environment. */
  function openstack(args: string[], auth: Partial<Record<string, string>> = {}): Promise<RunResult> {
    const o: Record<string, string> = {
      "auth-url": example.authUrl,
      username: "demo",
      password: example.passwords.demo,
      "project-name": "demo",
      "user-domain-name": "Default",
      "project-domain-name": "Default",
      "identity-api-version": "3",
      interface: "public",
      ...auth,
    };
    const global = Object.entries(o)
      .filter(([, v]) => v !== "")
      .flatMap(([k, v]) => [`--os-${k}`, v!]);
    return run(bin, [...global, ...args], {
      replaceEnv: true,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.path, XDG_CONFIG_HOME: home.path, XDG_CACHE_HOME: home.path, LANG: "C.UTF-8" },
      cwd: home.path,
      timeoutMs: CLI_TIMEOUT_MS,
    });
  }

  function parse<T>(r: RunResult): T {
    expect(r.code, describeRun(r)).toBe(0);
    try {
      return JSON.parse(r.stdout) as T;
    } catch {
      throw new Error(`openstack did not print JSON:\n${describeRun(r)}`);
    }
  }

  it("token issue prints a token the example issued, for the demo user and project", async () => {
    const r = await openstack(["token", "issue", "-f", "json"]);
    const out = parse<{ id: string; expires: string; project_id: string; user_id: string }>(r);
    console.log(`$ ${r.command.replace(example.passwords.demo, "***")}\n${r.stdout}`);
    const record = await example.app.identity.validateToken(out.id);
    expect(record, "the printed token id is live in the example's token store").toBeDefined();
    expect(record!.user.name).toBe("demo");
    expect(out.project_id).toBe(example.app.project.id);
    expect(out.user_id).toBe(record!.user.id);
    expect(Date.parse(out.expires)).toBeGreaterThan(Date.now());
  });

  it("server list prints the example's servers with names, ids, status, image and flavor", async () => {
    const r = await openstack(["server", "list", "-f", "json"]);
    const rows = parse<Array<Record<string, unknown>>>(r);
    console.log(`$ ${r.command.replace(example.passwords.demo, "***")}\n${r.stdout}`);
    const want = example.app.servers.map((s) => ({ ID: s.id, Name: s.name })).sort((a, b) => a.Name.localeCompare(b.Name));
    expect(rows.map((row) => ({ ID: row.ID, Name: row.Name })).sort((a, b) => String(a.Name).localeCompare(String(b.Name)))).toEqual(want);
    const web1 = rows.find((row) => row.Name === "web-1")!;
    expect(web1).toMatchObject({ Status: "ACTIVE", Image: "cirros-0.6.2-x86_64", Flavor: "m1.small", Networks: { private: ["10.0.0.11"] } });
  });

  it("server list with compute microversion 2.47 (embedded flavors) and --long", async () => {
    const rows = parse<Array<Record<string, unknown>>>(
      await openstack(["--os-compute-api-version", "2.47", "server", "list", "--long", "-f", "json"]),
    );
    expect(rows.map((row) => row.Name).sort()).toEqual(example.app.servers.map((s) => s.name).sort());
    expect(rows.find((row) => row.Name === "db-1")).toMatchObject({ Status: "SHUTOFF", "Power State": 4, Flavor: "m1.medium" });
  });

  it("server list --long at the default microversion: flavor and image names and ids, no Host for a member", async () => {
    const r = await openstack(["server", "list", "--long", "-f", "json"]);
    const rows = parse<Array<Record<string, unknown>>>(r);
    console.log(`$ ${r.command.replace(example.passwords.demo, "***")}\n${r.stdout}`);
    expect(Object.keys(rows[0]!)).toEqual([
      "ID", "Name", "Status", "Task State", "Power State", "Networks", "Image Name", "Image ID",
      "Flavor Name", "Flavor ID", "Availability Zone", "Host", "Properties",
    ]);
    expect(rows.map((row) => row.Name)).toEqual(["db-1", "web-2", "web-1"]);
    expect(rows.find((row) => row.Name === "web-1")).toEqual({
      ID: "0b6e8a52-6f3c-4d6e-9c1a-5a4f2b7d9e10",
      Name: "web-1",
      Status: "ACTIVE",
      "Task State": null,
      "Power State": 1,
      Networks: { private: ["10.0.0.11"] },
      "Image Name": "cirros-0.6.2-x86_64",
      "Image ID": "6f1c1b5e-3e1c-4a0b-9a5f-0c6b3c1d2e01",
      "Flavor Name": "m1.small",
      "Flavor ID": "2",
      "Availability Zone": "nova",
      Host: "", // OS-EXT-SRV-ATTR:host is for administrators only
      Properties: { role: "web" },
    });
    expect(rows.find((row) => row.Name === "db-1")).toMatchObject({ "Image Name": "N/A (booted from volume)", "Flavor Name": "m1.medium", "Flavor ID": "3", "Power State": 4 });
  });

  it("flavor list prints every flavor (the SDK at 2.61 fetches os-extra_specs for those without extra specs)", async () => {
    const r = await openstack(["flavor", "list", "-f", "json"]);
    const rows = parse<Array<Record<string, unknown>>>(r);
    console.log(`$ ${r.command.replace(example.passwords.demo, "***")}\n${r.stdout}`);
    expect(rows).toEqual(
      DEFAULT_FLAVORS.map((f) => ({ ID: f.id, Name: f.name, RAM: f.ram, Disk: f.disk, Ephemeral: 0, VCPUs: f.vcpus, "Is Public": true })),
    );
    const long = parse<Array<Record<string, unknown>>>(await openstack(["flavor", "list", "--long", "-f", "json"]));
    expect(long.map((row) => Object.keys(row))[0]).toEqual(["ID", "Name", "RAM", "Disk", "Ephemeral", "VCPUs", "Is Public", "Swap", "RXTX Factor", "Properties"]);
    expect(long.map((row) => [row.Name, row.Swap, row["RXTX Factor"], row.Properties])).toEqual([
      ["m1.tiny", "", 1, {}],
      ["m1.small", "", 1, {}],
      ["m1.medium", "", 1, { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" }],
    ]);
    const paged = parse<Array<{ Name: string }>>(await openstack(["flavor", "list", "--limit", "1", "--marker", "1", "-f", "json"]));
    expect(paged.map((row) => row.Name)).toEqual(["m1.small"]);
    const big = parse<Array<{ Name: string }>>(await openstack(["flavor", "list", "--min-ram", "2048", "--min-disk", "40", "-f", "json"]));
    expect(big.map((row) => row.Name)).toEqual(["m1.medium"]);
  });

  it("flavor list --long at compute 2.1 reads every flavor's properties from os-extra_specs", async () => {
    const long = parse<Array<Record<string, unknown>>>(
      await openstack(["--os-compute-api-version", "2.1", "flavor", "list", "--long", "-f", "json"]),
    );
    expect(long.map((row) => [row.ID, row.Properties])).toEqual([
      ["1", {}],
      ["2", {}],
      ["3", { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" }],
    ]);
  });

  it("flavor show by id and by name", async () => {
    const r = await openstack(["flavor", "show", "2", "-f", "json"]);
    const small = parse<Record<string, unknown>>(r);
    console.log(`$ ${r.command.replace(example.passwords.demo, "***")}\n${r.stdout}`);
    expect(small).toEqual({
      "OS-FLV-DISABLED:disabled": false,
      "OS-FLV-EXT-DATA:ephemeral": 0,
      access_project_ids: null,
      description: null,
      disk: 20,
      id: "2",
      name: "m1.small",
      "os-flavor-access:is_public": true,
      properties: {},
      ram: 2048,
      rxtx_factor: 1,
      swap: "",
      vcpus: 1,
    });
    const medium = parse<Record<string, unknown>>(await openstack(["flavor", "show", "m1.medium", "-f", "json"]));
    expect(medium).toMatchObject({ id: "3", name: "m1.medium", vcpus: 2, ram: 4096, disk: 40, properties: { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" } });
    const missing = await openstack(["flavor", "show", "m9.huge"]);
    expect(missing.code, describeRun(missing)).not.toBe(0);
    expect(missing.stderr).toContain("No Flavor found for m9.huge");
  });

  it("the administrator's commands the example prints run with its OS_* environment", async () => {
    const env = { ...openstackEnv(example, "admin"), PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.path, XDG_CONFIG_HOME: home.path, XDG_CACHE_HOME: home.path, LANG: "C.UTF-8" };
    const results: Record<string, Array<Record<string, unknown>>> = {};
    for (const args of SUGGESTED_COMMANDS.admin) {
      const r = await run(bin, [...args, "-f", "json"], { replaceEnv: true, env, cwd: home.path, timeoutMs: CLI_TIMEOUT_MS });
      results[args.slice(0, 2).join(" ")] = parse(r);
    }
    const servers = results["server list"]!;
    expect(servers.map((row) => row.Name)).toEqual(["db-1", "web-2", "web-1"]);
    expect(servers.map((row) => row.Host)).toEqual(["compute-2", "compute-1", "compute-1"]); // administrators see hosts
    expect(results["flavor list"]!.map((row) => [row.Name, row.Properties])).toEqual([
      ["m1.tiny", {}],
      ["m1.small", {}],
      ["m1.medium", { "hw:cpu_policy": "shared", "hw_rng:allowed": "True" }],
    ]);
    expect(results["endpoint list"]!).toHaveLength(9);
    expect(results["service list"]!.map((row) => row.Type).sort()).toEqual(["compute", "identity", "image"]);
  });

  it("catalog list and endpoint list show the public endpoints", async () => {
    const catalog = parse<Array<{ Name: string; Type: string }>>(await openstack(["catalog", "list", "-f", "json"]));
    expect(catalog.map((c) => c.Type).sort()).toEqual(["compute", "identity", "image"]);
    const endpoints = parse<Array<Record<string, unknown>>>(await openstack(["endpoint", "list", "--interface", "public", "-f", "json"]));
    expect(endpoints).toContainEqual(
      expect.objectContaining({ "Service Type": "compute", "Service Name": "nova", Interface: "public", Enabled: true, Region: "RegionOne", URL: `${example.url}/compute/v2.1` }),
    );
  });

  it("token revoke makes the token invalid", async () => {
    const { id } = parse<{ id: string }>(await openstack(["token", "issue", "-f", "json"]));
    const r = await openstack(["token", "revoke", id]);
    expect(r.code, describeRun(r)).toBe(0);
    expect(await example.app.identity.validateToken(id)).toBeUndefined();
  });

  it("a wrong password fails with the 401 message", async () => {
    const r = await openstack(["token", "issue", "-f", "json"], { password: "not-the-password" });
    expect(r.code, describeRun(r)).not.toBe(0);
    expect(r.stderr).toContain("The request you have made requires authentication. (HTTP 401)");
  });

  it("a non-administrator asking for all projects gets the 403", async () => {
    const r = await openstack(["server", "list", "--all-projects", "-f", "json"]);
    expect(r.code, describeRun(r)).not.toBe(0);
    expect(r.stderr).toContain("(HTTP 403)");
    const admin = parse<Array<{ Name: string }>>(
      await openstack(["server", "list", "--all-projects", "-f", "json"], { username: "admin", password: example.passwords.admin }),
    );
    expect(admin.map((s) => s.Name).sort()).toEqual(example.app.servers.map((s) => s.name).sort());
  });
});
