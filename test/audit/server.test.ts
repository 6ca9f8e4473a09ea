/**
 * Issue 45, parts 4 and 5 against a real all-in-one server on 127.0.0.1:
 * 40 wrong passwords are throttled with 429 (Retry-After, the OCI error
 * body) at the token service, Basic on /api and the web page's sign-in,
 * while the administrator still signs in from another address (127.0.0.2);
 * every sign-in, token, push and account change lands in the hash-chained
 * audit log, read through the admin-only, paged `GET /api/audit` and sent
 * to a webhook endpoint as `audit` events. System project: it listens.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAuditLog } from "../../src/audit/verify.js";
import { serve, type RunningServer } from "../../src/node/index.js";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { FAST } from "../users/helpers.js";

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** One HTTP request from the local address `from` (127.0.0.1 or 127.0.0.2: two clients on loopback). */
function call(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; from?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? "GET", headers: options.headers, localAddress: options.from ?? "127.0.0.1" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const ADMIN = basic("admin", "Adm1nPassword");

let dir: string;
let app: AllInOne;
let server: RunningServer;
let receiver: Server;
const received: Array<{ action: string; target: { audit?: { seq: number; hash: string; action: string; result: string } } }> = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-audit-"));
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push(...(JSON.parse(Buffer.concat(chunks).toString()) as { events: typeof received }).events);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const config = resolveConfig({
    document: parseConfigText(`version: 0.1
storage: {filesystem: {rootdirectory: ${dir}/data}}
auth: {token: {service: registry-kit, issuer: registry-kit}}
registrykit:
  keydirectory: ${dir}/keys
  tokenservice: {}
  users: {}
  ui: {}
  policy: {immutabletags: ["v*"]}
notifications:
  endpoints:
    - {name: audit, url: "${hook}", timeout: 2s, backoff: 100ms}
`),
    env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" },
    cwd: dir,
  }).config;
  app = await createAllInOne(config, { scrypt: FAST });
  server = await serve(app.handler, { host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await server?.close(0);
  await app?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("sign-in throttling on a real server", () => {
  it("40 wrong passwords at the token service: the first are 401, then 429 with Retry-After and the OCI error body; the admin signs in from another address", async () => {
    const statuses: number[] = [];
    let locked: Answer | undefined;
    for (let i = 0; i < 40; i++) {
      // A client-chosen X-Forwarded-For changes nothing: the server does not trust a proxy here.
      const res = await call(`${server.url}/service/token?service=registry-kit`, { headers: { authorization: basic("admin", `wrong${i}`), "x-forwarded-for": `10.9.9.${i}` } });
      statuses.push(res.status);
      if (res.status === 429) locked = res;
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(30);
    expect(Number(locked!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(locked!.body)).toEqual({ errors: [{ code: "TOOMANYREQUESTS", message: expect.any(String), detail: { retryAfterSeconds: expect.any(Number) } }] });
    // The right password from the attacked address waits for its lock ...
    expect((await call(`${server.url}/service/token?service=registry-kit`, { headers: { authorization: ADMIN } })).status).toBe(429);
    // ... but not from another one.
    expect((await call(`${server.url}/service/token?service=registry-kit`, { headers: { authorization: ADMIN }, from: "127.0.0.2" })).status).toBe(200);
  });

  it("Basic on /api and the web page's sign-in form are throttled the same way", async () => {
    const api: number[] = [];
    for (let i = 0; i < 10; i++) api.push((await call(`${server.url}/api/users`, { headers: { authorization: basic("bob", `x${i}`) }, from: "127.0.0.3" })).status);
    expect(api.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(api.slice(6)).toEqual([429, 429, 429, 429]);
    const ui: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call(`${server.url}/ui/sign-in`, {
        method: "POST", from: "127.0.0.4",
        headers: { "content-type": "application/x-www-form-urlencoded" }, body: `username=carol&password=x${i}`,
      });
      ui.push(res.status);
    }
    expect(ui.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(ui.slice(6)).toEqual([429, 429, 429, 429]);
    const ok = await call(`${server.url}/ui/sign-in`, {
      method: "POST", from: "127.0.0.2", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=admin&password=Adm1nPassword",
    });
    expect(ok.status).toBe(303);
  });
});

describe("the audit log on a real server", () => {
  it("records sign-ins with the client address, tokens, pushes and account changes; the chain verifies", async () => {
    const tokenRes = await call(`${server.url}/service/token?service=registry-kit&scope=repository:team/app:push,pull`, { headers: { authorization: ADMIN }, from: "127.0.0.2" });
    const token = (JSON.parse(tokenRes.body) as { token: string }).token;
    const blob = Buffer.from("audited layer");
    const digest = `sha256:${createHash("sha256").update(blob).digest("hex")}`;
    const push = await call(`${server.url}/v2/team/app/blobs/uploads/?digest=${digest}`, {
      method: "POST", from: "127.0.0.2", headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream", "content-length": String(blob.length) }, body: blob,
    });
    expect(push.status).toBe(201);
    const created = await call(`${server.url}/api/users`, {
      method: "POST", from: "127.0.0.2", headers: { authorization: ADMIN, "content-type": "application/json" }, body: JSON.stringify({ username: "dave", password: "Dave-Passw0rd!", email: "dave@example.com" }),
    });
    expect(created.status).toBe(201);

    const records = await allRecords();
    const actions = records.map((r) => `${r.action}:${r.result}`);
    expect(actions).toContain("signin:refused");
    expect(actions).toContain("signin:locked");
    expect(actions).toContain("token.issued:ok");
    expect(actions).toContain("user.created:ok");
    const refused = records.find((r) => r.action === "signin" && r.result === "refused")!;
    expect(refused).toMatchObject({ who: { kind: "user", name: "admin" }, from: { channel: "token", addr: "127.0.0.1" } });
    const pushed = records.find((r) => r.action === "push")!;
    expect(pushed).toMatchObject({ who: { kind: "user", name: "admin" }, result: "ok", project: "team", target: { repository: "team/app", digest }, from: { addr: "127.0.0.2" } });
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));

    const report = await verifyAuditLog(fsStorage({ root: `${dir}/data` }));
    expect(report.problems).toEqual([]);
    // Reading the log through /api/audit signs in with Basic: one more record since.
    expect(report.records).toBeGreaterThan(records.length);
  });

  it("a write refused by a policy (an immutable tag) is recorded as policy.denied, one the token does not allow as access.denied", async () => {
    const tokenRes = await call(`${server.url}/service/token?service=registry-kit&scope=repository:team/app:push,pull`, { headers: { authorization: ADMIN }, from: "127.0.0.2" });
    const auth = { authorization: `Bearer ${(JSON.parse(tokenRes.body) as { token: string }).token}` };
    const config = Buffer.from("{}");
    const configDigest = `sha256:${createHash("sha256").update(config).digest("hex")}`;
    expect((await call(`${server.url}/v2/team/app/blobs/uploads/?digest=${configDigest}`, { method: "POST", from: "127.0.0.2", headers: { ...auth, "content-length": "2" }, body: config })).status).toBe(201);
    const manifest = (annotation: string) => JSON.stringify({
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: configDigest, size: 2 }, layers: [], annotations: { a: annotation },
    });
    const put = (body: string) => call(`${server.url}/v2/team/app/manifests/v1`, { method: "PUT", from: "127.0.0.2", headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" }, body });
    expect((await put(manifest("one"))).status).toBe(201);
    expect((await put(manifest("two"))).status).toBe(403);
    // A token for pull only, used to push: the registry refuses it (insufficient_scope), recorded as access.denied.
    const pullOnly = await call(`${server.url}/service/token?service=registry-kit&scope=repository:team/app:pull`, { headers: { authorization: ADMIN }, from: "127.0.0.2" });
    const refused = await call(`${server.url}/v2/team/app/manifests/v2`, {
      method: "PUT", from: "127.0.0.2", body: manifest("three"),
      headers: { authorization: `Bearer ${(JSON.parse(pullOnly.body) as { token: string }).token}`, "content-type": "application/vnd.oci.image.manifest.v1+json" },
    });
    expect(refused.status).toBe(401);
    const records = await allRecords();
    expect(records.filter((r) => r.action === "access.denied")).toEqual([expect.objectContaining({
      who: { kind: "user", name: "admin" }, result: "refused", project: "team", target: { method: "PUT", path: "/v2/team/app/manifests/v2", repository: "team/app" },
    })]);
    const denied = records.filter((r) => r.action === "policy.denied");
    expect(denied).toEqual([expect.objectContaining({
      who: { kind: "user", name: "admin" }, result: "refused", project: "team",
      target: { method: "PUT", path: "/v2/team/app/manifests/v1", repository: "team/app" },
      detail: expect.stringMatching(/tag v1 of team\/app is immutable/),
    })]);
  });

  it("GET /api/audit is for administrators only, pages with Link, filters by project and refuses a bad query with 400", async () => {
    const first = await call(`${server.url}/api/audit?limit=2`, { headers: { authorization: ADMIN }, from: "127.0.0.2" });
    expect(first.status).toBe(200);
    const page = JSON.parse(first.body) as { records: Array<{ seq: number }>; next: number };
    expect(page.records.map((r) => r.seq)).toEqual([1, 2]);
    expect(page.next).toBe(2);
    expect(first.headers.link).toBe('</api/audit?limit=2&after=2>; rel="next"');
    const team = JSON.parse((await call(`${server.url}/api/audit?project=team`, { headers: { authorization: ADMIN }, from: "127.0.0.2" })).body) as { records: Array<{ project: string }> };
    expect(team.records.length).toBeGreaterThan(0);
    expect(team.records.every((r) => r.project === "team")).toBe(true);
    const bad = await call(`${server.url}/api/audit?since=yesterday`, { headers: { authorization: ADMIN }, from: "127.0.0.2" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ errors: [{ code: "BAD_REQUEST", message: "since must be an RFC 3339 time" }] });
    const user = await call(`${server.url}/api/audit`, { headers: { authorization: basic("dave", "Dave-Passw0rd!") }, from: "127.0.0.2" });
    expect(user.status).toBe(403);
    expect((await call(`${server.url}/api/audit`, { from: "127.0.0.2" })).status).toBe(401);
  });

  it("each record goes out through the notifier as an `audit` event carrying its hash", async () => {
    const records = await allRecords();
    const deadline = Date.now() + 20_000;
    while (received.filter((e) => e.action === "audit").length < records.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const audits = received.filter((e) => e.action === "audit").map((e) => e.target.audit!);
    const bySeq = new Map(audits.map((a) => [a.seq, a]));
    for (const record of records.slice(0, -1)) {
      // Record n+1's prev is record n's hash, as the event said.
      const next = records[record.seq]!;
      expect(bySeq.get(record.seq)?.hash).toBe(next.prev);
    }
  });
});

async function allRecords(): Promise<Array<{ seq: number; prev: string; action: string; result: string; who: unknown; from?: { addr?: string }; project?: string; target?: unknown; detail?: string }>> {
  const out = [];
  let after = 0;
  for (;;) {
    const res = await call(`${server.url}/api/audit?limit=1000&after=${after}`, { headers: { authorization: ADMIN }, from: "127.0.0.2" });
    const page = JSON.parse(res.body) as { records: Awaited<ReturnType<typeof allRecords>>; next?: number };
    out.push(...page.records);
    if (page.next === undefined) return out;
    after = page.next;
  }
}
