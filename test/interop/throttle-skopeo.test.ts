/**
 * Issue 45, part 5, with a real client: skopeo's wrong passwords at
 * `registry-kit serve`'s token service are throttled. After five refusals
 * skopeo gets 429 (it says "too many requests to registry"), and the audit
 * log records each attempt (refused, then locked).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageAuditLog } from "../../src/audit/log.js";
import { serve, type RunningServer } from "../../src/node/index.js";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { describeRun } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

let dir: string;
let app: AllInOne;
let server: RunningServer;
let skopeo: SkopeoSandbox;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-throttle-skopeo-"));
  skopeo = skopeoSandbox();
  const config = resolveConfig({
    document: parseConfigText(`version: 0.1
storage: {filesystem: {rootdirectory: ${dir}/data}}
auth: {token: {service: registry-kit, issuer: registry-kit}}
registrykit:
  keydirectory: ${dir}/keys
  tokenservice: {}
  users: {admin: {password: Adm1nPassword}}
`),
    env: {},
    cwd: dir,
  }).config;
  // Listening first, so that the token realm names the port actually bound.
  let handler: AllInOne["handler"] = async () => new Response(null, { status: 503 });
  server = await serve((request) => handler(request), { host: "127.0.0.1", port: 0 });
  app = await createAllInOne(config, { origin: server.url });
  handler = app.handler;
});
afterAll(async () => {
  await server?.close(0);
  await app?.close();
  skopeo?.remove();
  await rm(dir, { recursive: true, force: true });
});

describe("skopeo against sign-in throttling", () => {
  it("wrong passwords: refused five times, then 429 TOOMANYREQUESTS; every attempt is in the audit log", async () => {
    const ref = `docker://${new URL(server.url).host}/admin/app:v1`;
    const runs = [];
    for (let i = 0; i < 10; i++) runs.push(await skopeo.inspect(ref, { creds: { username: "admin", password: `wrong-${i}` } }));
    for (const run of runs) expect(run.code, describeRun(run)).not.toBe(0);
    const text = runs.map((r) => `${r.stdout}\n${r.stderr}`);
    expect(text.slice(0, 5).every((t) => /invalid username\/password|unauthorized/i.test(t)), text.join("\n---\n")).toBe(true);
    // The locks after the sixth failure last 1 s, then 2 s: of the next runs (about 0.5 s each) most meet one.
    const locked = text.slice(6).filter((t) => /429|too many/i.test(t));
    expect(locked.length, text.join("\n---\n")).toBeGreaterThanOrEqual(1);
    expect(locked[0]).toMatch(/too many requests to registry/);
    const { records } = await storageAuditLog(fsStorage({ root: `${dir}/data` })).list({ limit: 1000 });
    const signins = records.filter((r) => r.action === "signin").map((r) => r.result);
    expect(signins.slice(0, 5)).toEqual(["refused", "refused", "refused", "refused", "refused"]);
    expect(signins.filter((r) => r === "locked").length).toBe(locked.length);
  });
});
