/**
 * The lifecycle commands as real child processes (`node bin/registry-kit.mjs`):
 * `users list|add|passwd|admin|delete` on the store `serve` uses (offline,
 * and while a server runs: its management API sees the reset password at
 * once), `repositories delete|quotas`, `gc` with the configuration's
 * retention rules, and the server's scheduled GC reported in the log and the
 * metrics, and the admin routes of the management API.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRegistry, immutableTags } from "../../src/registry/index.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { storageUserStore, storeCredentialCheck } from "../../src/users/index.js";
import { pushImage, req } from "../registry/helpers.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
let data: string;
let config: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  data = await mkdtemp(path.join(tmpdir(), "rk-lifecycle-"));
  config = path.join(data, "config.yml");
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await rm(data, { recursive: true, force: true });
});

async function writeConfig(registrykit = "", http = ""): Promise<void> {
  await writeFile(config, `version: 0.1
log: { level: info, accesslog: { disabled: true } }
http: { addr: "127.0.0.1:0"${http} }
storage: { filesystem: { rootdirectory: ${data}/registry }, delete: { enabled: true } }
registrykit:
  keydirectory: ${data}/keys
  tokenservice: {}
  users: { admin: { password: Adm1nPassword } }
${registrykit}`);
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to its end with `stdin` piped in. */
function run(args: string[], stdin = ""): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: data, env: { ...process.env }, stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdin!.end(stdin);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Start `serve config.yml`; resolves with its URL once the banner is out. */
function serve(): Promise<{ url: string; debug: string | undefined; err: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, "serve", config], { cwd: data, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner\n${out}\n${err}`)), 20_000);
    child.stdout!.on("data", () => {
      const url = /registry-kit listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (!url || !out.includes("SIGINT (Ctrl-C) or SIGTERM stops the server")) return;
      clearTimeout(timer);
      const debug = /debug\s+(http:\/\/\S+)/.exec(out)?.[1];
      resolve({ url, debug, err: () => err, stop: async () => void (child.kill("SIGTERM"), await exited) });
    });
    void exited.then(() => reject(new Error(`exited before the banner\n${out}\n${err}`)));
  });
}

/** Push `tags` of `name` into the configured storage, in process. */
async function seed(name: string, tags: string[]): Promise<void> {
  const storage = fsStorage({ root: path.join(data, "registry"), fsync: false });
  const registry = createRegistry({ storage, uploadSecret: "seed" });
  for (const tag of tags) await pushImage(registry, name, tag, `${name}:${tag}`);
  await storage.close?.();
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });

describe("registry-kit users", () => {
  it("add, list, admin, passwd and delete on the configured store, with the API's rules", async () => {
    await writeConfig();
    expect(await run(["users", "list", config])).toMatchObject({ code: 0, stdout: "ID  NAME  ADMIN  EMAIL  CREATED\n" });
    const added = await run(["users", "add", "alice", "--admin", config], "Alice-Pass1\n");
    expect(added).toMatchObject({ code: 0, stdout: "added alice (id 1, administrator)\n" });
    const weak = await run(["users", "add", "bob", config], "weakpass\n");
    expect(weak.code).toBe(1);
    expect(weak.stderr).toBe("registry-kit users add: password needs an upper-case letter, a digit\n");
    expect((await run(["users", "add", "bob", "--email=bob@example.com", config], "Bob-Pass1\r\n")).stdout).toBe("added bob (id 2)\n");
    expect((await run(["users", "add", "Bob", config], "Bob-Pass1\n")).stderr).toBe("registry-kit users add: that user name is taken\n");
    expect((await run(["users", "add", "carol", config], "")).stderr).toBe("registry-kit users add: no password on standard input (give it as the first line)\n");

    const list = JSON.parse((await run(["users", "list", "--json", config])).stdout) as { username: string; sysadmin_flag: boolean; email: string }[];
    expect(list.map((u) => [u.username, u.sysadmin_flag, u.email])).toEqual([["alice", true, ""], ["bob", false, "bob@example.com"]]);

    expect((await run(["users", "admin", "alice", "--revoke", config])).stderr).toBe("registry-kit users admin: the last administrator can be neither deleted nor revoked\n");
    expect((await run(["users", "admin", "bob", config])).stdout).toBe("bob is now an administrator\n");
    expect((await run(["users", "admin", "alice", "--revoke", config])).stdout).toBe("alice is no longer an administrator\n");
    expect((await run(["users", "passwd", "alice", config], "New-Alice-2\n")).stdout).toBe("password of alice changed\n");
    expect((await run(["users", "passwd", "nobody", config], "New-Alice-2\n")).stderr).toBe("registry-kit users passwd: no user named nobody\n");
    expect((await run(["users", "delete", "bob", config])).stderr).toBe("registry-kit users delete: the last administrator can be neither deleted nor revoked\n");
    expect((await run(["users", "delete", "alice", config])).stdout).toBe("deleted alice\n");
    expect((await run(["users", "frobnicate", config])).code).toBe(2);

    const storage = fsStorage({ root: path.join(data, "registry") });
    const check = storeCredentialCheck(storageUserStore(storage));
    expect(await check("bob", "Bob-Pass1")).toMatchObject({ name: "bob", admin: true });
    expect(await check("alice", "New-Alice-2")).toBeUndefined();
    await storage.close?.();
  });

  it("passwd while the server runs: the management API takes the new password at once and refuses the old", async () => {
    await writeConfig();
    const server = await serve();
    const current = (user: string, password: string) => fetch(`${server.url}/api/users/current`, { headers: basic(user, password) });
    expect((await current("admin", "Adm1nPassword")).status).toBe(200);
    expect((await run(["users", "passwd", "admin", config], "Recovered-9\n")).code).toBe(0);
    expect((await current("admin", "Adm1nPassword")).status).toBe(401);
    expect((await current("admin", "Recovered-9")).status).toBe(200);
    await server.stop();
  });
});

describe("registry-kit repositories", () => {
  it("delete removes a repository from the catalog (refused while it holds an immutable tag unless --force); quotas prints usage", async () => {
    await writeConfig(`  policy: { immutabletags: { "prod/*": ["v*"] }, quotas: { "*": 1MiB } }`);
    await seed("app", ["v1", "v2"]);
    await seed("prod/api", ["v1"]);
    const quotas = await run(["repositories", "quotas", config]);
    expect(quotas.stdout).toMatch(/^\*: \d+ of 1048576 bytes \([\d.]+ KiB of 1\.0 MiB\), 9 blobs in 2 repositories\n$/);
    expect(await run(["repositories", "delete", "app", config])).toMatchObject({
      code: 0, stdout: "deleted repository app: 2 tags, 2 manifests, 4 blob links, 0 uploads; run registry-kit gc to free the blobs\n",
    });
    expect(await run(["repositories", "delete", "app", config])).toMatchObject({ code: 1, stderr: "registry-kit repositories delete: repository app does not exist\n" });
    const refused = await run(["repositories", "delete", "prod/api", config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("registry-kit repositories delete: repository prod/api cannot be deleted: it holds the immutable tag v1; use --force to delete it anyway\n");
    expect((await run(["repositories", "delete", "prod/api", "--force", config])).code).toBe(0);
    const storage = fsStorage({ root: path.join(data, "registry") });
    const registry = createRegistry({ storage, uploadSecret: "x" });
    expect(await (await registry(req("GET", "/v2/_catalog"))).json()).toEqual({ repositories: [] });
    await storage.close?.();
  });
});

describe("gc with retention, and the scheduled GC", () => {
  it("gc --dry-run lists the tags retention would remove, never an immutable one; the real run removes them", async () => {
    await writeConfig(`  policy: { immutabletags: ["v1"] }
  retention:
    - { repositories: ["app"], keeplast: 1 }`);
    await seed("app", ["v1", "v2", "v3", "v4"]);
    const dry = await run(["gc", "--dry-run", "--grace-period=0", config]);
    expect(dry.code).toBe(0);
    expect(dry.stdout.split("\n").filter((l) => l.includes(" tag "))).toEqual(["would remove tag app:v2", "would remove tag app:v3"]);
    const real = await run(["gc", "--grace-period=0", config]);
    expect(real.stdout).toContain("removed: 2 tags, 2 manifests");
    const storage = fsStorage({ root: path.join(data, "registry") });
    const registry = createRegistry({ storage, uploadSecret: "x", policies: [immutableTags(["v1"])] });
    expect(await (await registry(req("GET", "/v2/app/tags/list"))).json()).toEqual({ name: "app", tags: ["v1", "v4"] });
    await storage.close?.();
  });

  it("the server collects every registrykit.gc.interval, logs each run and counts it in the metrics; the admin routes answer", async () => {
    await writeConfig(`  retention: [{ repositories: "*", keeplast: 1 }]
  gc: { interval: 1s, graceperiod: 0s }
  policy: { quotas: { "app": 10MiB } }`, `, debug: { addr: "127.0.0.1:0", prometheus: { enabled: true, path: /metrics } }`);
    await seed("app", ["a", "b", "c"]);
    const server = await serve();
    await until("a scheduled gc log line", () => /scheduled gc .*tags=2 manifests=2/.test(server.err()));
    const metrics = await (await fetch(`${server.debug}/metrics`)).text();
    expect(metrics).toMatch(/registrykit_gc_runs_total\{result="ok"\} [1-9]/);
    expect(metrics).toMatch(/registrykit_gc_removed_total\{kind="tag"\} 2\n/);
    const tags = await (await fetch(`${server.url}/v2/app/tags/list`, { headers: await bearer(server.url) })).json();
    expect(tags).toEqual({ name: "app", tags: ["c"] });

    const admin = basic("admin", "Adm1nPassword");
    const usage = (await (await fetch(`${server.url}/api/quotas`, { headers: admin })).json()) as { quotas: { namespace: string; used: number; limit: number; repositories: number }[] };
    expect(usage.quotas).toHaveLength(1);
    expect(usage.quotas[0]).toMatchObject({ namespace: "app", limit: 10 * 1024 * 1024, repositories: 1 });
    expect((await fetch(`${server.url}/api/quotas`)).status).toBe(401);
    const deleted = await fetch(`${server.url}/api/repositories/app`, { method: "DELETE", headers: admin });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ repository: "app", found: true, tags: 1, manifests: 1, links: 2, uploads: 0 });
    expect((await fetch(`${server.url}/api/repositories/app`, { method: "DELETE", headers: admin })).status).toBe(404);
    await server.stop();
  });
});

/** A pull token for `app` from the server's token service, as the admin. */
async function bearer(url: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/service/token?service=registry-kit&scope=repository:app:pull`, { headers: basic("admin", "Adm1nPassword") });
  const { token } = (await res.json()) as { token: string };
  return { authorization: `Bearer ${token}` };
}
