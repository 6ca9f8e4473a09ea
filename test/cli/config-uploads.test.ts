/**
 * `storage.maintenance.uploadpurging` read as Distribution reads it: on by
 * default, `age: 168h`, `interval: 24h`, `dryrun: false`, each key defaulting
 * on its own; and the all-in-one server keeping an upload idle for longer than
 * the library's one hour, and started longer ago than its 24 hours, as
 * Distribution does.
 */
import { mkdtemp, readdir, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { uploadStateCodec } from "../../src/registry/upload-state.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";

const WEEK_SECONDS = 168 * 3600;
const DAY_MS = 24 * 3600 * 1000;
const ORIGIN = "http://registry.test";
const SECRET = "s3cret";

function uploads(yaml: string | undefined, env: Record<string, string> = {}) {
  return resolveConfig({ document: yaml === undefined ? undefined : parseConfigText(yaml), env, cwd: "/srv/app" }).config.uploads;
}

describe("uploadpurging defaults (Distribution's)", () => {
  it("are on, 168h, 24h, no dry run without a maintenance section, and with no config file at all", () => {
    const expected = { idleSeconds: WEEK_SECONDS, purge: { intervalMs: DAY_MS, dryRun: false }, limits: {} };
    expect(uploads("version: 0.1\nstorage:\n  inmemory:\n")).toEqual(expected);
    expect(uploads(undefined)).toEqual(expected);
  });

  it("fill each missing key on its own", () => {
    expect(uploads("version: 0.1\nstorage:\n  inmemory:\n  maintenance:\n    uploadpurging: { dryrun: true }\n"))
      .toEqual({ idleSeconds: WEEK_SECONDS, purge: { intervalMs: DAY_MS, dryRun: true }, limits: {} });
    expect(uploads("version: 0.1\nstorage:\n  inmemory:\n  maintenance:\n    uploadpurging: { age: 2h }\n"))
      .toEqual({ idleSeconds: 7200, purge: { intervalMs: DAY_MS, dryRun: false }, limits: {} });
    expect(uploads("version: 0.1\nstorage:\n  inmemory:\n  maintenance:\n    uploadpurging: { interval: 30m }\n"))
      .toEqual({ idleSeconds: WEEK_SECONDS, purge: { intervalMs: 1_800_000, dryRun: false }, limits: {} });
  });

  it("are overridden by REGISTRY_STORAGE_MAINTENANCE_UPLOADPURGING_* as in Distribution", () => {
    expect(uploads("version: 0.1\nstorage:\n  inmemory:\n", { REGISTRY_STORAGE_MAINTENANCE_UPLOADPURGING_AGE: "3h", REGISTRY_STORAGE_MAINTENANCE_UPLOADPURGING_ENABLED: "false" }))
      .toEqual({ idleSeconds: 10_800, limits: {} });
  });
});

describe("abandoned uploads in the all-in-one server on a Distribution config", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "rk-purge-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function configOf(root: string, maintenance: string) {
    const yaml = `version: 0.1\nhttp: {addr: "127.0.0.1:5000", secret: ${SECRET}}\nstorage:\n  filesystem: {rootdirectory: ${root}}\n${maintenance}`;
    return { ...resolveConfig({ document: parseConfigText(yaml), env: {}, cwd: dir }).config, keyDirectory: path.join(root, "keys") };
  }

  /** Start an upload of 5 bytes in `name`; its session's directory and the PATCH URL to continue it. */
  async function openUpload(app: AllInOne, root: string, name: string): Promise<{ dir: string; next: URL }> {
    const started = await app.handler(new Request(`${ORIGIN}/v2/${name}/blobs/uploads/`, { method: "POST" }));
    expect(started.status).toBe(202);
    const patched = await app.handler(new Request(new URL(started.headers.get("location")!, ORIGIN), {
      method: "PATCH", body: "hello", headers: { "content-type": "application/octet-stream" },
    }));
    expect(patched.status).toBe(202);
    const uploads = path.join(root, "repositories", name, "_uploads");
    const [uuid] = await readdir(uploads);
    return { dir: path.join(uploads, uuid!), next: new URL(patched.headers.get("location")!, ORIGIN) };
  }

  async function backdate(sessionDir: string, hours: number): Promise<void> {
    const then = new Date(Date.now() - hours * 3600 * 1000);
    await utimes(path.join(sessionDir, "data"), then, then);
  }

  /** Open two uploads, make one 2 hours idle and one 200 hours, then start a server on `maintenance` and wait for its purge at start. */
  async function purgeAtStart(maintenance: string, name: string): Promise<{ twoHours: boolean; twoHundredHours: boolean; removed: unknown }> {
    const root = path.join(dir, name);
    const first = await createAllInOne({ ...configOf(root, maintenance), uploads: { ...configOf(root, maintenance).uploads, purge: undefined } });
    const recent = await openUpload(first, root, "team/recent");
    const old = await openUpload(first, root, "team/old");
    await first.close();
    await backdate(recent.dir, 2);
    await backdate(old.dir, 200);
    const events: Record<string, unknown>[] = [];
    const second = await createAllInOne(configOf(root, maintenance), { log: (e) => void events.push(e as Record<string, unknown>) });
    try {
      await waitFor(() => events.some((e) => e.msg === "upload purge"));
    } finally {
      await second.close();
    }
    return {
      twoHours: await exists(recent.dir),
      twoHundredHours: await exists(old.dir),
      removed: events.find((e) => e.msg === "upload purge")?.removed,
    };
  }

  it("the purge at start keeps a session idle 2 hours under the default age (168h) and removes one idle 200 hours", async () => {
    expect(await purgeAtStart("", "default")).toEqual({ twoHours: true, twoHundredHours: false, removed: 1 });
  });

  it("with age: 1h both go", async () => {
    expect(await purgeAtStart("  maintenance:\n    uploadpurging: {age: 1h}\n", "one-hour")).toEqual({ twoHours: false, twoHundredHours: false, removed: 2 });
  });

  /** PATCH an upload whose signed state says it started `hours` ago (a state signed with the server's http.secret). */
  async function continueStartedHoursAgo(maintenance: string, name: string, hours: number): Promise<number> {
    const root = path.join(dir, name);
    const app = await createAllInOne({ ...configOf(root, maintenance), uploads: { ...configOf(root, maintenance).uploads, purge: undefined } });
    try {
      const upload = await openUpload(app, root, "team/app");
      const uuid = path.basename(upload.dir);
      const state = await uploadStateCodec(SECRET).sign({ name: "team/app", uuid, offset: 5, startedAt: Date.now() - hours * 3600 * 1000 });
      upload.next.searchParams.set("_state", state);
      const res = await app.handler(new Request(upload.next, { method: "PATCH", body: "world", headers: { "content-type": "application/octet-stream" } }));
      await res.arrayBuffer();
      return res.status;
    } finally {
      await app.close();
    }
  }

  it("an upload started 30 hours ago continues under the default age (Distribution keeps it until 168h), not under age: 1h (the library's 24h stays the least)", async () => {
    expect(await continueStartedHoursAgo("", "thirty-default", 30)).toBe(202);
    expect(await continueStartedHoursAgo("  maintenance:\n    uploadpurging: {age: 1h}\n", "thirty-short", 30)).toBe(404);
    expect(await continueStartedHoursAgo("  maintenance:\n    uploadpurging: {age: 1h}\n", "twenty-short", 20)).toBe(202);
  });
});

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the purge at start");
    await new Promise((r) => setTimeout(r, 20));
  }
}
