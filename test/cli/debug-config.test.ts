import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { StorageError, type StorageDriver } from "../../src/storage/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { FAST } from "../users/helpers.js";
import { valueOf } from "../util/prometheus-parse.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-debug-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const resolve = (yaml: string, env: Record<string, string> = {}) => resolveConfig({ document: parseConfigText(yaml), env, cwd: dir });
const BASE = `version: 0.1\nstorage: { inmemory: {} }\nregistrykit: { keydirectory: ${JSON.stringify(path.join("KEYS"))} }\n`;

describe("http.debug and health in the configuration", () => {
  it("reads http.debug.addr and prometheus (path defaults to /metrics), without warnings for them", () => {
    const { config, warnings } = resolve(`${BASE}http: { debug: { addr: "127.0.0.1:5001", prometheus: { enabled: true } } }\n`);
    expect(config.http.debug).toEqual({ addr: { host: "127.0.0.1", port: 5001 }, prometheus: { path: "/metrics" } });
    expect(warnings.filter((w) => w.includes("debug"))).toEqual([]);
    expect(resolve(`${BASE}http: { debug: { addr: ":5001", prometheus: { enabled: true, path: /m } } }\n`).config.http.debug)
      .toEqual({ addr: { host: "0.0.0.0", port: 5001 }, prometheus: { path: "/m" } });
  });

  it("has no debug listener without http.debug.addr, and no metrics unless prometheus is enabled", () => {
    expect(resolve(`${BASE}http: { debug: { prometheus: { enabled: true } } }\n`).config.http.debug).toBeUndefined();
    expect(resolve(`${BASE}http: { debug: { addr: "127.0.0.1:5001" } }\n`).config.http.debug).toEqual({ addr: { host: "127.0.0.1", port: 5001 } });
  });

  it("reads health.storagedriver with Distribution's defaults (10 s, threshold 0), also from the environment", () => {
    expect(resolve(`${BASE}health: { storagedriver: { enabled: true } }\n`).config.health).toEqual({ storageDriver: { intervalMs: 10_000, threshold: 0 }, files: [], http: [], tcp: [] });
    expect(resolve(`${BASE}health: { storagedriver: { enabled: true, interval: 2s, threshold: 3 } }\n`).config.health?.storageDriver)
      .toEqual({ intervalMs: 2000, threshold: 3 });
    expect(resolve(`${BASE}health: { storagedriver: { enabled: false, interval: 2s } }\n`).config.health).toBeUndefined();
    expect(resolve(BASE, { REGISTRY_HEALTH_STORAGEDRIVER_ENABLED: "true", REGISTRY_HEALTH_STORAGEDRIVER_THRESHOLD: "5" }).config.health?.storageDriver)
      .toEqual({ intervalMs: 10_000, threshold: 5 });
  });

  it("reads health.file, health.http and health.tcp lists with Distribution's defaults", () => {
    const { config, warnings } = resolve(`${BASE}health:
  file: [{ file: maintenance.flag }, { file: /srv/down, interval: 5s }]
  http: [{ uri: "http://127.0.0.1:9000/ping", headers: { X-Probe: [yes] }, statuscode: 204, timeout: 1s, interval: 3s, threshold: 2 }, { uri: "https://up.test/" }]
  tcp: [{ addr: "127.0.0.1:6379", timeout: 500ms, threshold: 1 }]
`);
    expect(warnings.filter((w) => w.startsWith("health"))).toEqual([]);
    expect(config.health).toEqual({
      files: [{ file: path.join(dir, "maintenance.flag"), intervalMs: 10_000 }, { file: "/srv/down", intervalMs: 5000 }],
      http: [
        { uri: "http://127.0.0.1:9000/ping", headers: [["X-Probe", "yes"]], statusCode: 204, timeoutMs: 1000, intervalMs: 3000, threshold: 2 },
        { uri: "https://up.test/", headers: [], statusCode: 200, timeoutMs: 10_000, intervalMs: 10_000, threshold: 0 },
      ],
      tcp: [{ addr: "127.0.0.1:6379", target: { host: "127.0.0.1", port: 6379 }, timeoutMs: 500, intervalMs: 10_000, threshold: 1 }],
    });
  });

  it.each([
    [`http: { debug: { addr: "nope" } }`, /http\.debug\.addr/],
    [`http: { debug: { addr: ":1", prometheus: { enabled: maybe } } }`, /http\.debug\.prometheus\.enabled/],
    [`http: { debug: { addr: ":1", prometheus: { enabled: true, path: "no-slash" } } }`, /http\.debug\.prometheus\.path/],
    [`http: { debug: { addr: ":1", prometheus: { enabled: true, path: /debug/health } } }`, /must differ/],
    [`health: { storagedriver: { enabled: true, interval: 0s } }`, /interval/],
    [`health: { storagedriver: { enabled: true, threshold: -2 } }`, /threshold/],
    [`health: { file: { file: /x } }`, /health\.file: expected a list/],
    [`health: { file: [{ interval: 1s }] }`, /health\.file\[0\]\.file/],
    [`health: { http: [{ uri: "ftp://x" }] }`, /health\.http\[0\]\.uri/],
    [`health: { http: [{ uri: "http://x/", statuscode: 42 }] }`, /statuscode/],
    [`health: { tcp: [{ addr: "no-port" }] }`, /health\.tcp\[0\]\.addr/],
  ])("refuses %s", (yaml, message) => {
    expect(() => resolve(`${BASE}${yaml}\n`)).toThrow(ConfigError);
    expect(() => resolve(`${BASE}${yaml}\n`)).toThrow(message);
  });
});

describe("createAllInOne with http.debug and health", () => {
  it("serves /debug/health and the metrics on the debug handler only, counting registry, token and storage work", async () => {
    const { config } = resolve(
      `version: 0.1\nstorage: { inmemory: {} }\nhttp: { debug: { addr: "127.0.0.1:0", prometheus: { enabled: true, path: /prom } } }\n` +
        `registrykit: { keydirectory: ${JSON.stringify(path.join(dir, "keys1"))}, tokenservice: { publicrepositories: ["*"] } }\n` +
        `auth: { token: { realm: "http://r.test/service/token", service: registry-kit, issuer: registry-kit } }\n`,
    );
    const app = await createAllInOne(config, { origin: "http://r.test" });
    try {
      const debug = app.debugHandler!;
      expect((await debug(new Request("http://d.test/debug/health"))).status).toBe(200);
      const token = await app.handler(new Request("http://r.test/service/token?service=registry-kit&scope=repository:lib/a:pull"));
      expect(token.status).toBe(200);
      const { token: bearer } = (await token.json()) as { token: string };
      expect((await app.handler(new Request("http://r.test/v2/lib/a/manifests/x", { headers: { authorization: `Bearer ${bearer}` } }))).status).toBe(404);
      expect((await app.handler(new Request("http://r.test/v2/"))).status).toBe(401);
      // Not on the main handler.
      expect((await app.handler(new Request("http://r.test/prom"))).status).toBe(404);
      expect((await app.handler(new Request("http://r.test/debug/health"))).status).toBe(404);

      const scrape = await debug(new Request("http://d.test/prom"));
      expect(scrape.status).toBe(200);
      const text = await scrape.text();
      expect(valueOf(text, "registry_http_requests_total", { handler: "manifest", method: "get", code: "404" })).toBe(1);
      expect(valueOf(text, "registry_http_requests_total", { handler: "base", method: "get", code: "401" })).toBe(1);
      expect(valueOf(text, "registry_http_requests_total", { handler: "token", method: "get", code: "200" })).toBe(1);
      expect(valueOf(text, "registrykit_token_requests_total", { outcome: "issued", reason: "" })).toBe(1);
      expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "inmemory", action: "stat" })).toBeGreaterThan(0);
      expect((await debug(new Request("http://d.test/metrics"))).status).toBe(404);
      const vars = (await (await debug(new Request("http://d.test/debug/vars"))).json()) as { cmdline: string[]; memstats: { rss: number }; uptime_seconds: number };
      expect(vars.cmdline).toEqual(process.argv);
      expect(vars.memstats.rss).toBeGreaterThan(0);
      expect(vars.uptime_seconds).toBeGreaterThanOrEqual(0);
    } finally {
      await app.close();
    }
  });

  it("counts the web page, the admin routes and the JWKS under their own handler labels", async () => {
    const { config } = resolve(
      `version: 0.1\nstorage: { inmemory: {} }\nhttp: { debug: { addr: "127.0.0.1:0", prometheus: { enabled: true } } }\n` +
        `registrykit: { keydirectory: ${JSON.stringify(path.join(dir, "keys-ui"))}, tokenservice: {}, users: { admin: { password: "Admin-pass-1" } } }\n` +
        `auth: { token: { realm: "http://r.test/service/token", service: registry-kit, issuer: registry-kit } }\n`,
    );
    const app = await createAllInOne(config, { origin: "http://r.test", scrypt: FAST });
    try {
      expect((await app.handler(new Request("http://r.test/ui/"))).status).toBe(303);
      expect((await app.handler(new Request("http://r.test/.well-known/jwks.json"))).status).toBe(200);
      expect((await app.handler(new Request(`http://r.test${config.users!.prefix}/quotas`))).status).toBe(401);
      const text = await (await app.debugHandler!(new Request("http://d.test/metrics"))).text();
      expect(valueOf(text, "registry_http_requests_total", { handler: "ui", method: "get", code: "303" })).toBe(1);
      expect(valueOf(text, "registry_http_requests_total", { handler: "jwks", method: "get", code: "200" })).toBe(1);
      expect(valueOf(text, "registry_http_requests_total", { handler: "admin", method: "get", code: "401" })).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("without prometheus has no metrics path and no debug handler without http.debug.addr", async () => {
    const withDebug = await createAllInOne(resolve(`${BASE}http: { debug: { addr: "127.0.0.1:0" } }\n`.replace("KEYS", path.join(dir, "k2"))).config);
    expect((await withDebug.debugHandler!(new Request("http://d.test/metrics"))).status).toBe(404);
    await withDebug.close();
    const without = await createAllInOne(resolve(BASE.replace("KEYS", path.join(dir, "k3"))).config);
    expect(without.debugHandler).toBeUndefined();
    await without.close();
  });

  it("turns /debug/health and the API to 503 after `threshold` failed storage checks, and back", async () => {
    const state = { broken: false };
    const base = memoryStorage();
    const storage: StorageDriver = {
      ...base,
      list: async (prefix, options) => {
        if (state.broken) throw new StorageError("io", "bucket unreachable");
        return base.list(prefix, options);
      },
    };
    const { config } = resolve(
      `${BASE.replace("KEYS", path.join(dir, "k4"))}http: { debug: { addr: "127.0.0.1:0" } }\nhealth: { storagedriver: { enabled: true, interval: 20ms, threshold: 2 } }\n`,
    );
    const app = await createAllInOne(config, { storage });
    const health = () => app.debugHandler!(new Request("http://d.test/debug/health"));
    try {
      expect((await health()).status).toBe(200);
      state.broken = true;
      await until(async () => (await health()).status === 503);
      expect(await (await health()).json()).toEqual({ storagedriver_inmemory: "bucket unreachable" });
      const gated = await app.handler(new Request("http://r.test/v2/"));
      expect(gated.status).toBe(503);
      expect(((await gated.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe("UNAVAILABLE");
      state.broken = false;
      await until(async () => (await health()).status === 200);
      expect((await app.handler(new Request("http://r.test/v2/"))).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
