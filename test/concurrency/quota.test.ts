/**
 * Quotas under real concurrency, on memory and fs storage: 24 pushes into one
 * namespace at once (blobs and manifests interleaving through the handler),
 * where only 5 fit. Uploaded blobs count before their manifest, so the
 * refused pushes' blobs take room too (all 24 may fail): at most 5 succeed, the usage
 * (loose blobs included) never passes the limit and equals a recount from
 * scratch; garbage collection removes the refused pushes' blobs, leaving what
 * the pushed images hold, and the room it frees takes a push again; every
 * pushed image pulls whole.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collectGarbage, createRegistry, quota } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, imageManifest, pushBlob, req, sha256, type Handler } from "../registry/helpers.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const drivers: [string, () => Promise<StorageDriver>][] = [
  ["memory", async () => memoryStorage()],
  ["fs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rk-quota-"));
    dirs.push(dir);
    return fsStorage({ root: dir, fsync: false });
  }],
];

const PUSHES = 24;
const OCI = "application/vnd.oci.image.manifest.v1+json";

/** Image `i` of repository `team/rNN`: a config, a layer of its own (2000 bytes) and a layer all images share (500 bytes). */
function image(i: number) {
  const name = `team/r${String(i).padStart(2, "0")}`;
  const config = bytes(JSON.stringify({ image: String(i).padStart(2, "0") }));
  const own = new Uint8Array(2000).fill(i);
  const shared = new Uint8Array(500).fill(255);
  const manifest = imageManifest(sha256(config), config.byteLength, [own, shared].map((l) => ({ digest: sha256(l), size: l.byteLength })));
  return { name, config, own, shared, manifest };
}

async function pushImage(registry: Handler, i: number): Promise<number> {
  const { name, config, own, shared, manifest } = image(i);
  const blobs = await Promise.allSettled([config, own, shared].map((b) => pushBlob(registry, name, b)));
  for (const b of blobs) if (b.status === "rejected") expect(String(b.reason)).toMatch(/PUT 403 .*quota exceeded for team\/\*/);
  const put = await registry(req("PUT", `/v2/${name}/manifests/v1`, { body: manifest, headers: { "content-type": OCI } }));
  if (put.status === 403) expect(await put.text()).toMatch(/"code":"DENIED","message":"quota exceeded for team\/\*: this manifest adds/);
  return put.status;
}

describe.each(drivers)("quota under concurrent pushes (%s)", (_label, open) => {
  it(`${PUSHES} pushes at once where 5 fit: at most 5 succeed, usage within the limit and equal to a recount, before and after GC`, async () => {
    const storage = await open();
    const first = image(0);
    // Every image adds the same bytes (manifest, config, own layer); the shared layer counts once.
    const perImage = bytes(first.manifest).byteLength + first.config.byteLength + 2000;
    const limit = 500 + 5 * perImage + Math.floor(perImage / 2);
    const quotas = quota({ "team/*": limit });
    const registry = createRegistry({ storage, uploadSecret: "quota-concurrency", policies: [quotas] });

    const statuses = await Promise.all(Array.from({ length: PUSHES }, (_, i) => pushImage(registry, i)));
    const pushed = statuses.flatMap((s, i) => (s === 201 ? [i] : []));
    expect(pushed.length).toBeLessThanOrEqual(5);
    // A push whose blob was refused gets MANIFEST_BLOB_UNKNOWN; every other refusal is the quota's 403.
    expect(statuses.every((s) => s === 201 || s === 403 || s === 400)).toBe(true);

    const [usage] = await quotas.usage(storage);
    expect(usage!.used).toBeLessThanOrEqual(limit);
    expect(usage!.repositories).toBe(pushed.length);
    expect(await quota({ "team/*": limit }).usage(storage)).toEqual([usage]);

    // The refused pushes left blobs no manifest references: GC takes them, what the pushed images hold stays.
    const report = await collectGarbage(storage, { gracePeriodSeconds: 0 });
    expect(report.blobs.removed.length).toBeGreaterThan(0);
    const shared = pushed.length > 0 ? 1 : 0;
    const held = { namespace: "team/*", limit, used: shared * 500 + pushed.length * perImage, blobs: shared + 3 * pushed.length, repositories: pushed.length };
    expect(await quota({ "team/*": limit }).usage(storage)).toEqual([held]);
    if (pushed.length < 5) {
      expect(await pushImage(registry, PUSHES)).toBe(201);
      pushed.push(PUSHES);
    }
    for (const i of pushed) {
      const { name, own } = image(i);
      expect((await registry(req("GET", `/v2/${name}/manifests/v1`))).status).toBe(200);
      const blob = await registry(req("GET", `/v2/${name}/blobs/${sha256(own)}`));
      expect(sha256(new Uint8Array(await blob.arrayBuffer()))).toBe(sha256(own));
    }
    await storage.close?.();
  });
});
