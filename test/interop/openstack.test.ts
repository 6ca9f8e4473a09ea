/**
 * The real `openstack` client (python-openstackclient, with keystoneauth1,
 * novaclient and openstacksdk underneath) against the identity + compute
 * example on 127.0.0.1: version discovery, password authentication with
 * project scope, the catalog, `token issue`, `server list`, a microversion,
 * and the 401/403 paths as the client reports them.
 *
 * The CLI runs with an isolated HOME (no clouds.yaml, no cache) and no OS_*
 * variables from the environment. When `openstack` is missing this test
 * fails; it never skips.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExample, type RunningExample } from "../../examples/identity-compute/server.js";
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
