/**
 * The periodic verify of the all-in-one server: `registrykit.verify` in the
 * configuration, the scheduler, `createAllInOne` starting and stopping it, and
 * the real `registry-kit serve` logging what it found.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { bannerLines } from "../../src/cli/banner.js";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { startPeriodicVerify } from "../../src/server/jobs/verify-schedule.js";
import type { LogEvent } from "../../src/http/log.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const sha256 = (data: string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;
const dataKey = (digest: string) => `blobs/sha256/${digest.slice(7, 9)}/${digest.slice(7)}/data`;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-verify-schedule-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const resolve = (yaml: string, env: Record<string, string> = {}) => resolveConfig({ document: parseConfigText(yaml), env, cwd: dir });
const STORAGE = "version: 0.1\nstorage:\n  inmemory: {}\n";

/** Push `body` into `app` with one POST; returns its digest. */
async function push(handler: (r: Request) => Promise<Response>, body: string, origin = "http://registry.test"): Promise<string> {
  const digest = sha256(body);
  const res = await handler(new Request(`${origin}/v2/app/blobs/uploads/?digest=${digest}`, { method: "POST", body }));
  expect(res.status).toBe(201);
  return digest;
}

describe("registrykit.verify in the configuration", () => {
  it("is off without the section, and on with it (default every 24h, report only, 2 blobs at once)", () => {
    expect(resolve(STORAGE).config.verify).toBeUndefined();
    const { config, warnings } = resolve(`${STORAGE}registrykit:\n  verify: {}\n`);
    expect(config.verify).toEqual({ intervalMs: 86_400_000, quarantine: false, concurrency: 2 });
    expect(warnings.filter((w) => w.includes("verify"))).toEqual([]);
  });

  it("reads interval, quarantine, concurrency and enabled, also from REGISTRY_REGISTRYKIT_VERIFY_* variables", () => {
    const yaml = `${STORAGE}registrykit:\n  verify:\n    interval: 12h\n    quarantine: true\n    concurrency: 4\n`;
    expect(resolve(yaml).config.verify).toEqual({ intervalMs: 43_200_000, quarantine: true, concurrency: 4 });
    expect(resolve(`${STORAGE}registrykit:\n  verify:\n    enabled: false\n    interval: 1h\n`).config.verify).toBeUndefined();
    expect(resolve(STORAGE, { REGISTRY_REGISTRYKIT_VERIFY_INTERVAL: "30m", REGISTRY_REGISTRYKIT_VERIFY_QUARANTINE: "true" }).config.verify)
      .toEqual({ intervalMs: 1_800_000, quarantine: true, concurrency: 2 });
  });

  it("refuses values it cannot run with, naming the key", () => {
    const bad = (verify: string) => () => resolve(`${STORAGE}registrykit:\n  verify:\n${verify}`);
    expect(bad("    interval: 0s\n")).toThrow(new ConfigError("registrykit.verify.interval", "must be longer than 0"));
    expect(bad("    interval: soon\n")).toThrow(/^registrykit\.verify\.interval: expected a duration/);
    expect(bad("    quarantine: maybe\n")).toThrow(/^registrykit\.verify\.quarantine: expected true or false/);
    expect(bad("    concurrency: 0\n")).toThrow(/^registrykit\.verify\.concurrency: expected a positive integer/);
    expect(bad("    concurrency: 257\n")).toThrow(new ConfigError("registrykit.verify.concurrency", "must be at most 256"));
  });
});

/** Memory storage whose blob reads never deliver a byte until cancelled, to catch a run in the middle. */
function stalledStorage(): { storage: StorageDriver; reads: () => number } {
  const inner = memoryStorage();
  let reads = 0;
  const storage: StorageDriver = {
    ...inner,
    async read(key, range) {
      if (!key.startsWith("blobs/")) return inner.read(key, range);
      reads++;
      return new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) });
    },
  };
  return { storage, reads: () => reads };
}

describe("startPeriodicVerify", () => {
  it("runs again every interval and logs each run's result, until stopped", async () => {
    const storage = memoryStorage();
    const registry = createRegistry({ storage, uploadSecret: "s" });
    const bad = await push(registry, "bytes");
    await storage.write(dataKey(bad), new TextEncoder().encode("rot"));
    const events: LogEvent[] = [];

    const periodic = startPeriodicVerify(storage, { intervalMs: 5, quarantine: true, concurrency: 2 }, (e) => events.push(e));
    await vi.waitFor(() => expect(events.filter((e) => e.msg === "verify done").length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    await periodic.stop();

    const done = events.filter((e) => e.msg === "verify done");
    expect(done[0]).toMatchObject({ level: "info", checked: 1, mismatches: 1, quarantined: 1 });
    expect(done[1]).toMatchObject({ level: "info", checked: 0, mismatches: 0 });
    expect(events.find((e) => e.msg === "verify quarantined a corrupt blob")).toMatchObject({ level: "warn", digest: bad });
  });

  it("stop() ends a run in progress, and no run starts after it", async () => {
    const { storage, reads } = stalledStorage();
    await storage.write(dataKey(sha256("x")), new TextEncoder().encode("x"));
    const events: LogEvent[] = [];
    const periodic = startPeriodicVerify(storage, { intervalMs: 1, quarantine: true, concurrency: 1 }, (e) => events.push(e));
    await vi.waitFor(() => expect(reads()).toBe(1), { timeout: 10_000 });

    await periodic.stop();

    expect(events.map((e) => e.msg)).toEqual(["verify stopped"]);
    // A timer left running would start a run (and a read) within 1 ms.
    await new Promise((r) => setTimeout(r, 50));
    expect(reads()).toBe(1);
    expect(events).toHaveLength(1);
  });
});

describe("createAllInOne with registrykit.verify", () => {
  it("quarantines a corrupt blob on schedule (GET 404 BLOB_UNKNOWN), shows it in the banner, and stops on close", async () => {
    const storage = memoryStorage();
    const yaml = `${STORAGE}registrykit:\n  keydirectory: ${dir}/keys\n  verify:\n    interval: 10ms\n    quarantine: true\n`;
    const events: LogEvent[] = [];
    const app = await createAllInOne(resolve(yaml).config, { storage, log: (e) => events.push(e) });
    expect(app.info.verify).toEqual({ intervalMs: 10, quarantine: true });
    expect(bannerLines("http://registry.test", app.info, "0.0.0")).toContain("  verify          every 10ms, quarantine on");
    const digest = await push(app.handler, "layer");
    await storage.write(dataKey(digest), new TextEncoder().encode("reyal"));

    await vi.waitFor(() => expect(events.some((e) => e.msg === "verify quarantined a corrupt blob")).toBe(true), { timeout: 10_000 });
    const res = await app.handler(new Request(`http://registry.test/v2/app/blobs/${digest}`));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe("BLOB_UNKNOWN");
    await app.close();

    const runs = events.filter((e) => e.msg === "verify done" || e.msg === "verify stopped").length;
    await new Promise((r) => setTimeout(r, 100));
    expect(events.filter((e) => e.msg === "verify done" || e.msg === "verify stopped")).toHaveLength(runs);
  });
});

describe("registry-kit serve with registrykit.verify", () => {
  it("logs the periodic run's findings on stderr; the quarantined blob answers 404 until a client re-pushes it", async () => {
    const root = path.join(dir, "serve-store");
    const storage = fsStorage({ root, fsync: false });
    const digest = await push(createRegistry({ storage, uploadSecret: "s" }), "the real layer");
    await storage.write(dataKey(digest), new TextEncoder().encode("a rotten layer"));
    const configFile = path.join(dir, "serve.yml");
    await writeFile(configFile, [
      "version: 0.1",
      "http:\n  addr: 127.0.0.1:0",
      `storage:\n  filesystem:\n    rootdirectory: ${root}`,
      `registrykit:\n  keydirectory: ${dir}/serve-keys\n  verify:\n    interval: 100ms\n    quarantine: true`,
      "",
    ].join("\n"));
    const child = spawn(process.execPath, [BIN, "serve", configFile], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on("exit", r));
    try {
      // The run's summary comes last, a moment after its findings: wait for it, not for the first finding.
      await vi.waitFor(() => expect(err).toContain("info verify done"), { timeout: 20_000, interval: 50 });
      expect(err).toContain("verify quarantined a corrupt blob");
      expect(err).toMatch(new RegExp(`error verify found a blob whose bytes do not match its digest digest=${digest} actualDigest=${sha256("a rotten layer")} size=14`));
      expect(err).toMatch(/info verify done checked=1 bytes=14 mismatches=1 quarantined=1 vanished=0 errors=0/);
      expect(out).toContain("  verify          every 100ms, quarantine on");
      const url = /registry-kit listening on (http:\/\/\S+)/.exec(out)![1]!;

      expect((await fetch(`${url}/v2/app/blobs/${digest}`)).status).toBe(404);
      await push((r) => fetch(r), "the real layer", url);
      const back = await fetch(`${url}/v2/app/blobs/${digest}`);
      expect(back.status).toBe(200);
      expect(await back.text()).toBe("the real layer");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
