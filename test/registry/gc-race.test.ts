/**
 * Garbage collection with a grace period of 0 racing pushes (issue 41, item
 * 5): a manifest PUT the registry accepted must never lose a blob or a child
 * manifest, whatever the timing. Deterministic interleavings first (a manifest
 * PUT right before the GC unlinks its blobs, an index PUT right before the GC
 * removes its untagged child), then GC run over and over while many pushes go
 * on, on memory and fs storage.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collectGarbage, createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, imageManifest, pushBlob, req, sha256, type Handler } from "./helpers.js";

const OCI = "application/vnd.oci.image.manifest.v1+json";
const INDEX = "application/vnd.oci.image.index.v1+json";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const drivers: [string, () => Promise<StorageDriver>][] = [
  ["memory", async () => memoryStorage()],
  ["fs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rk-gc-race-"));
    dirs.push(dir);
    return fsStorage({ root: dir, fsync: false });
  }],
];

/**
 * `storage` as GC sees it: `before()` runs once, at the first delete of a
 * matching key, and every delete of a matching key waits for it.
 */
function beforeDelete(storage: StorageDriver, matches: (key: string) => boolean, before: () => Promise<void>): StorageDriver {
  let done: Promise<void> | undefined;
  const view = Object.create(storage) as StorageDriver;
  view.delete = async (key) => {
    if (matches(key)) await (done ??= before());
    return storage.delete(key);
  };
  return view;
}

/** Config and layer bytes of image `seed`, and its manifest. */
function image(seed: string) {
  const config = bytes(JSON.stringify({ architecture: "amd64", os: "linux", seed }));
  const layer = bytes(`layer of ${seed}`);
  const manifest = imageManifest(sha256(config), config.byteLength, [{ digest: sha256(layer), size: layer.byteLength }]);
  return { config, layer, manifest, digest: sha256(manifest), blobs: [config, layer] };
}

const putManifest = (registry: Handler, name: string, reference: string, body: string, type = OCI) =>
  registry(req("PUT", `/v2/${name}/manifests/${reference}`, { body, headers: { "content-type": type } }));

/** Every blob and child of the manifest `reference` of `name` is served whole; the failures, listed. */
async function missing(registry: Handler, name: string, reference: string): Promise<string[]> {
  const res = await registry(req("GET", `/v2/${name}/manifests/${reference}`));
  if (res.status !== 200) return [`manifest ${name}@${reference} → ${res.status}`];
  const doc = (await res.json()) as { config?: { digest: string }; layers?: { digest: string }[]; manifests?: { digest: string }[] };
  const gone: string[] = [];
  for (const child of doc.manifests ?? []) gone.push(...(await missing(registry, name, child.digest)));
  for (const d of [...(doc.config ? [doc.config] : []), ...(doc.layers ?? [])]) {
    const blob = await registry(req("GET", `/v2/${name}/blobs/${d.digest}`));
    const body = new Uint8Array(await blob.arrayBuffer());
    if (blob.status !== 200 || sha256(body) !== d.digest) gone.push(`blob ${d.digest} of ${name}@${reference} → ${blob.status}`);
  }
  return gone;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `storage` whose every call first yields to the event loop (memory storage answers in microtasks, which would let a GC loop starve the pushes). */
function yielding(storage: StorageDriver): StorageDriver {
  const view = Object.create(storage) as Record<string, unknown>;
  for (const method of ["stat", "read", "write", "append", "move", "delete", "deletePrefix", "list"] as const) {
    const call = storage[method] as (...args: unknown[]) => Promise<unknown>;
    view[method] = async (...args: unknown[]) => (await new Promise((resolve) => setImmediate(resolve)), call.apply(storage, args));
  }
  return view as unknown as StorageDriver;
}

describe.each(drivers)("gc with graceperiod 0 racing pushes (%s)", (_label, open) => {
  it("a manifest PUT accepted just before the GC unlinks its (old) blobs keeps them", async () => {
    const storage = await open();
    const registry = createRegistry({ storage, uploadSecret: "gc-race" });
    const img = image("before-unlink");
    for (const b of img.blobs) await pushBlob(registry, "app", b);
    await pause(5);
    let status = 0;
    const gcView = beforeDelete(storage, (key) => key.includes("/_layers/"), async () => {
      status = (await putManifest(registry, "app", "v1", img.manifest)).status;
    });
    await collectGarbage(gcView, { gracePeriodSeconds: 0 });
    expect(status).toBe(201);
    expect(await missing(registry, "app", "v1")).toEqual([]);
    // The next run (nothing racing) keeps them too.
    await collectGarbage(storage, { gracePeriodSeconds: 0 });
    expect(await missing(registry, "app", "v1")).toEqual([]);
    await storage.close?.();
  });

  it("an index PUT accepted just before the GC removes its untagged child keeps the child", async () => {
    const storage = await open();
    const registry = createRegistry({ storage, uploadSecret: "gc-race" });
    const img = image("child");
    for (const b of img.blobs) await pushBlob(registry, "app", b);
    expect((await putManifest(registry, "app", img.digest, img.manifest)).status).toBe(201);
    const index = JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests: [{ mediaType: OCI, digest: img.digest, size: bytes(img.manifest).byteLength }] });
    await pause(5);
    let status = 0;
    const gcView = beforeDelete(storage, (key) => key.includes("/_manifests/revisions/") && key.endsWith(img.digest.slice(7)), async () => {
      status = (await putManifest(registry, "app", "multi", index, INDEX)).status;
    });
    await collectGarbage(gcView, { gracePeriodSeconds: 0, removeUntagged: true });
    expect(status).toBe(201);
    expect(await missing(registry, "app", "multi")).toEqual([]);
    await collectGarbage(storage, { gracePeriodSeconds: 0, removeUntagged: true });
    expect(await missing(registry, "app", "multi")).toEqual([]);
    await storage.close?.();
  });

  it("a mount that links an old orphan while the GC removes it falls back to an upload, never a link to missing bytes", async () => {
    const storage = await open();
    const orphan = bytes("an orphan some push mounts");
    const digest = sha256(orphan);
    await pushBlob(createRegistry({ storage, uploadSecret: "gc-race" }), "app", orphan);
    await pause(5);
    // The mount's link write waits (once it is reached) until a whole GC has run.
    let reached!: () => void;
    const writeReached = new Promise<void>((resolve) => (reached = resolve));
    let gcDone!: () => void;
    const gcFinished = new Promise<void>((resolve) => (gcDone = resolve));
    const view = Object.create(storage) as StorageDriver;
    view.write = async (key, body, options) => {
      if (key.startsWith("repositories/other/_layers/")) {
        reached();
        await gcFinished;
      }
      return storage.write(key, body, options);
    };
    const registry = createRegistry({ storage: view, uploadSecret: "gc-race" });
    const mounting = registry(req("POST", `/v2/other/blobs/uploads/?mount=${digest}&from=app`));
    await writeReached;
    const report = await collectGarbage(storage, { gracePeriodSeconds: 0 });
    expect(report.blobs.removed).toEqual([digest]);
    gcDone();
    const mount = await mounting;
    // The source went while the link was written: an upload session instead, as when `from` lacks the blob.
    expect(mount.status).toBe(202);
    expect((await registry(req("HEAD", `/v2/other/blobs/${digest}`))).status).toBe(404);
    const config = bytes("{}");
    await pushBlob(registry, "other", config);
    const manifest = imageManifest(sha256(config), config.byteLength, [{ digest, size: orphan.byteLength }]);
    expect((await putManifest(registry, "other", "v1", manifest)).status).toBe(400);
    await storage.close?.();
  });

  it.each(["before", "after"])("an upload of an old orphan's bytes and a manifest PUT accepted just %s the GC takes those bytes keep them", async (when) => {
    const storage = await open();
    const registry = createRegistry({ storage, uploadSecret: "gc-race" });
    const img = image(`re-pushed ${when}`);
    // The layer is an old orphan: linked in "old", referenced by no manifest.
    await pushBlob(registry, "old", img.layer);
    await pause(5);
    const takes = (key: string) => key.startsWith("blobs/") && key.endsWith(`${sha256(img.layer).slice(7)}/data`);
    let status = 0;
    let raced: Promise<void> | undefined;
    const race = () => (raced ??= (async () => {
      for (const b of img.blobs) await pushBlob(registry, "app", b);
      status = (await putManifest(registry, "app", "v1", img.manifest)).status;
    })());
    // However the GC takes the bytes (a delete, or a move aside), the push runs just before or just after.
    const gcView = Object.create(storage) as StorageDriver;
    gcView.delete = async (key) => {
      if (!takes(key)) return storage.delete(key);
      if (when === "before") await race();
      await storage.delete(key);
      if (when === "after") await race();
    };
    gcView.move = async (from, to, options) => {
      if (!takes(from)) return storage.move(from, to, options);
      if (when === "before") await race();
      await storage.move(from, to, options);
      if (when === "after") await race();
    };
    await collectGarbage(gcView, { gracePeriodSeconds: 0 });
    expect(raced).toBeDefined();
    expect(status).toBe(201);
    expect(await missing(registry, "app", "v1")).toEqual([]);
    await collectGarbage(storage, { gracePeriodSeconds: 0 });
    expect(await missing(registry, "app", "v1")).toEqual([]);
    await storage.close?.();
  });

  it("bytes a killed run left aside go back at the next run's start", async () => {
    const storage = await open();
    const registry = createRegistry({ storage, uploadSecret: "gc-race" });
    const img = image("left aside");
    for (const b of img.blobs) await pushBlob(registry, "app", b);
    expect((await putManifest(registry, "app", "v1", img.manifest)).status).toBe(201);
    // As a run killed between its move aside and its last listing leaves them.
    const hex = sha256(img.layer).slice(7);
    await storage.move(`blobs/sha256/${hex.slice(0, 2)}/${hex}/data`, `gc-trash/sha256/${hex}`);
    expect(await missing(registry, "app", "v1")).not.toEqual([]);
    await collectGarbage(storage, { gracePeriodSeconds: 0 });
    expect(await missing(registry, "app", "v1")).toEqual([]);
    expect((await storage.list("gc-trash")).keys).toEqual([]);
    await storage.close?.();
  });

  it("GC run over and over while 48 pushes go on: every accepted manifest keeps all its blobs", { timeout: 60_000 }, async () => {
    const storage = yielding(await open());
    const registry = createRegistry({ storage, uploadSecret: "gc-race" });
    // An old orphan some pushes reuse without uploading it (they see it with HEAD).
    const orphan = bytes("an old orphan layer");
    await pushBlob(registry, "app", orphan);
    let pushing = true;
    let runs = 0;
    const collecting = (async () => {
      while (pushing) {
        await collectGarbage(storage, { gracePeriodSeconds: 0, removeUntagged: runs % 2 === 1 });
        runs++;
        await pause(Math.random() * 10);
      }
    })();
    const accepted: { name: string; tag: string }[] = [];
    let refused = 0;
    const pushes = Promise.all(Array.from({ length: 48 }, async (_, i) => {
      const name = `r${i % 6}`;
      const img = image(`push ${i}`);
      await pause(Math.random() * 200);
      await Promise.all(img.blobs.map((b) => pushBlob(registry, name, b)));
      const layers = [{ digest: sha256(img.layer), size: img.layer.byteLength }];
      if (i % 3 === 0 && (await registry(req("HEAD", `/v2/app/blobs/${sha256(orphan)}`))).status === 200 && name === "app") layers.push({ digest: sha256(orphan), size: orphan.byteLength });
      // The time between the last blob and the manifest, in which GC may run.
      await pause(Math.random() * 4);
      const manifest = imageManifest(sha256(img.config), img.config.byteLength, layers);
      const put = await putManifest(registry, name, `t${i}`, manifest);
      if (put.status === 201) accepted.push({ name, tag: `t${i}` });
      else {
        // Refused because GC took a blob first: a clear 400, never a dangling manifest.
        expect(put.status).toBe(400);
        refused++;
      }
    }));
    await pushes.finally(() => (pushing = false));
    await collecting;
    expect(runs).toBeGreaterThan(2);
    const gone: string[] = [];
    for (const { name, tag } of accepted) gone.push(...(await missing(registry, name, tag)));
    expect(gone, `${accepted.length} accepted, ${refused} refused, ${runs} GC runs`).toEqual([]);
    await storage.close?.();
  });
});
