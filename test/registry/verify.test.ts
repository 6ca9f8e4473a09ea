/**
 * verifyBlobs: the shared cases on the memory and fs drivers, then what
 * concurrent registry traffic, GC, a stop signal and bad options do to it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createRegistry, verifyBlobs, type VerifyProgress } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, errorCode, pushBlob, pushImage, req, sha256 } from "./helpers.js";

const MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";
import { corrupt, dataKey, describeVerifyCases, pushAs, snapshot } from "./verify-cases.js";

describeVerifyCases("memory", async () => ({ storage: memoryStorage() }));
describeVerifyCases("fs", async () => {
  const root = await mkdtemp(path.join(tmpdir(), "rk-verify-"));
  return { storage: fsStorage({ root, fsync: false }), cleanup: () => rm(root, { recursive: true, force: true }) };
});

/** The real memory driver, with a hook run after each read or list has answered (to race GC and pushes against verify). */
function hooked(hooks: { afterRead?: (key: string) => Promise<void>; afterList?: (keys: string[]) => Promise<void> }) {
  const inner = memoryStorage();
  let openReads = 0;
  let maxOpenReads = 0;
  const storage: StorageDriver = {
    ...inner,
    name: "hooked",
    async read(key, range) {
      const stream = await inner.read(key, range);
      await hooks.afterRead?.(key);
      if (!stream || !key.startsWith("blobs/")) return stream;
      // Count the blob streams being consumed at once.
      maxOpenReads = Math.max(maxOpenReads, ++openReads);
      const reader = stream.getReader();
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 1));
          const { done, value } = await reader.read();
          if (done) {
            openReads--;
            controller.close();
          } else controller.enqueue(value);
        },
        cancel: (reason) => (openReads--, reader.cancel(reason)),
      });
    },
    async list(prefix, options) {
      const page = await inner.list(prefix, options);
      await hooks.afterList?.(page.keys);
      return page;
    },
  };
  return { storage, registry: createRegistry({ storage, uploadSecret: "verify-test" }), maxOpenReads: () => maxOpenReads };
}

describe("verifyBlobs with concurrent traffic", () => {
  it("skips, without an error, a blob GC deleted after it was listed", async () => {
    let doomed = "";
    const { storage, registry } = hooked({
      afterList: async (keys) => {
        if (doomed && keys.includes(dataKey(doomed))) await storage.delete(dataKey(doomed));
      },
    });
    await pushBlob(registry, "app", "kept");
    doomed = await pushBlob(registry, "app", "collected");

    const report = await verifyBlobs(storage, { quarantine: true });

    expect(report).toMatchObject({ checked: 1, vanished: 1, mismatches: [], errors: [], quarantined: 0 });
  });

  it("skips, without an error, a corrupt blob GC deleted between its hashing and its quarantine", async () => {
    let doomed = "";
    const { storage, registry } = hooked({
      // The memory driver's read is a snapshot, so the hash still sees the corrupt bytes.
      afterRead: async (key) => {
        if (doomed && key === dataKey(doomed)) await storage.delete(key);
      },
    });
    doomed = await pushBlob(registry, "app", "bytes");
    await corrupt(storage, doomed, "rotten");

    const report = await verifyBlobs(storage, { quarantine: true });

    expect(report).toMatchObject({ checked: 0, vanished: 1, mismatches: [], errors: [], quarantined: 0 });
    expect((await storage.list("quarantine")).keys).toEqual([]);
  });

  it("keeps a blob a client re-pushed while its corrupt bytes were being hashed: the good bytes stay served, nothing is quarantined", async () => {
    let repaired = "";
    let armed = false;
    const { storage, registry } = hooked({
      afterRead: async (key) => {
        if (!armed || key !== dataKey(repaired)) return;
        armed = false;
        expect(await pushAs(registry, "app", "good bytes")).toBe(repaired);
      },
    });
    repaired = await pushBlob(registry, "app", "good bytes");
    await corrupt(storage, repaired, "rotten");
    armed = true;

    const report = await verifyBlobs(storage, { quarantine: true });

    expect(report).toMatchObject({ mismatches: [], quarantined: 0, errors: [] });
    expect((await storage.list("quarantine")).keys).toEqual([]);
    const res = await registry(req("GET", `/v2/app/blobs/${repaired}`));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("good bytes");
  });

  it("never flags an upload in progress, nor blobs committed while it runs", async () => {
    const { storage, registry } = hooked({});
    for (let i = 0; i < 10; i++) await pushBlob(registry, "app", `before ${i}`);
    // An upload that has bytes but no commit yet.
    const start = await registry(req("POST", "/v2/app/blobs/uploads/"));
    const patch = await registry(req("PATCH", start.headers.get("location")!, { body: bytes("half of a layer") }));
    expect(patch.status).toBe(202);

    const pushes = (async () => {
      for (let i = 0; i < 20; i++) await (i % 2 ? pushBlob(registry, "app", `during ${i}`) : pushAs(registry, "app", `during ${i}`));
    })();
    const report = await verifyBlobs(storage, { quarantine: true, concurrency: 3 });
    await pushes;

    expect(report.mismatches).toEqual([]);
    expect(report.errors).toEqual([]);
    expect(report.checked).toBeGreaterThanOrEqual(10);
    expect((await storage.list("quarantine")).keys).toEqual([]);
    const after = await verifyBlobs(storage);
    expect(after).toMatchObject({ checked: 30, mismatches: [], errors: [] });
  });

  it("reads no more blobs at once than `concurrency`", async () => {
    const { storage, registry, maxOpenReads } = hooked({});
    for (let i = 0; i < 12; i++) await pushBlob(registry, "app", `blob ${i} `.repeat(200));
    await verifyBlobs(storage, { concurrency: 3 });
    expect(maxOpenReads()).toBe(3);
  });
});

describe("verifyBlobs: stop and resume", () => {
  it("stops on the signal with a resume point, and a run with `after` checks exactly the rest", async () => {
    const storage = memoryStorage();
    const registry = createRegistry({ storage, uploadSecret: "verify-test" });
    const digests: string[] = [];
    for (let i = 0; i < 9; i++) digests.push(await pushBlob(registry, "app", `blob ${i}`));
    digests.sort();
    const controller = new AbortController();
    const first: VerifyProgress[] = [];

    const stopped = await verifyBlobs(storage, {
      signal: controller.signal,
      concurrency: 1,
      onProgress: (p) => {
        first.push(p);
        if (p.checked === 4) controller.abort();
      },
    });

    expect(stopped).toMatchObject({ aborted: true, checked: 4, resumeAfter: digests[3] });
    expect(first.map((p) => p.digest)).toEqual(digests.slice(0, 4));
    const rest: string[] = [];
    const resumed = await verifyBlobs(storage, { after: stopped.resumeAfter!, onProgress: (p) => rest.push(p.digest) });
    expect(resumed).toMatchObject({ aborted: false, checked: 5 });
    expect(resumed.resumeAfter).toBeUndefined();
    expect(rest).toEqual(digests.slice(4));
  });

  it("an already aborted signal checks nothing and changes nothing", async () => {
    const storage = memoryStorage();
    const registry = createRegistry({ storage, uploadSecret: "verify-test" });
    const digest = await pushBlob(registry, "app", "bytes");
    await corrupt(storage, digest, "rot");
    const before = await snapshot(storage);

    const report = await verifyBlobs(storage, { quarantine: true, signal: AbortSignal.abort() });

    expect(report).toMatchObject({ aborted: true, checked: 0, mismatches: [] });
    expect(report.resumeAfter).toBeUndefined();
    expect(await snapshot(storage)).toEqual(before);
  });
});

describe("verifyBlobs: a corrupt manifest", () => {
  it("is quarantined like a layer: GET of the manifest answers MANIFEST_UNKNOWN, and pushing it again repairs it", async () => {
    const storage = memoryStorage();
    const registry = createRegistry({ storage, uploadSecret: "verify-test" });
    const image = await pushImage(registry, "app", "v1");
    await corrupt(storage, image.digest, image.manifest.replace("schemaVersion", "schemaversion"));

    const report = await verifyBlobs(storage, { quarantine: true });

    expect(report.mismatches.map((m) => m.digest)).toEqual([image.digest]);
    // A fresh process: nothing cached from before.
    const fresh = createRegistry({ storage, uploadSecret: "verify-test" });
    const gone = await fresh(req("GET", `/v2/app/manifests/${image.digest}`, { headers: { accept: MANIFEST_TYPE } }));
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("MANIFEST_UNKNOWN");
    const put = await fresh(req("PUT", "/v2/app/manifests/v1", { body: image.manifest, headers: { "content-type": MANIFEST_TYPE } }));
    expect(put.status).toBe(201);
    const back = await fresh(req("GET", "/v2/app/manifests/v1", { headers: { accept: MANIFEST_TYPE } }));
    expect(await back.text()).toBe(image.manifest);
    expect((await verifyBlobs(storage)).mismatches).toEqual([]);
  });
});

describe("verifyBlobs: what it reports and refuses", () => {
  it("logs each mismatch and quarantine, and a summary", async () => {
    const storage = memoryStorage();
    const registry = createRegistry({ storage, uploadSecret: "verify-test" });
    const digest = await pushBlob(registry, "app", "bytes");
    await corrupt(storage, digest, "rot");
    const events: Record<string, unknown>[] = [];

    await verifyBlobs(storage, { quarantine: true, log: (e) => events.push(e) });

    expect(events).toEqual([
      { level: "error", msg: "verify found a blob whose bytes do not match its digest", digest, actualDigest: sha256("rot"), size: 3 },
      { level: "warn", msg: "verify quarantined a corrupt blob", digest, key: expect.stringMatching(/^quarantine\//) },
      { level: "info", msg: "verify done", checked: 1, bytes: 3, mismatches: 1, quarantined: 1, vanished: 0, errors: 0 },
    ]);
  });

  it("counts a read failure as an error, not a mismatch, and goes on", async () => {
    const inner = memoryStorage();
    const registry = createRegistry({ storage: inner, uploadSecret: "verify-test" });
    const broken = await pushBlob(registry, "app", "unreadable");
    await pushBlob(registry, "app", "readable");
    const storage: StorageDriver = {
      ...inner,
      read: async (key, range) => {
        if (key === dataKey(broken)) throw new Error("disk on fire");
        return inner.read(key, range);
      },
    };

    const report = await verifyBlobs(storage, { quarantine: true });

    expect(report).toMatchObject({ checked: 1, mismatches: [], quarantined: 0, errors: [{ digest: broken, message: "disk on fire" }] });
  });

  it("reports the mismatch and the error when the move to quarantine fails; the corrupt bytes stay where they were", async () => {
    const inner = memoryStorage();
    const registry = createRegistry({ storage: inner, uploadSecret: "verify-test" });
    const digest = await pushBlob(registry, "app", "bytes");
    await corrupt(inner, digest, "rot");
    const storage: StorageDriver = {
      ...inner,
      move: async () => {
        throw new Error("read-only filesystem");
      },
    };

    const report = await verifyBlobs(storage, { quarantine: true });

    expect(report).toMatchObject({
      checked: 1, quarantined: 0,
      mismatches: [{ digest, actualDigest: sha256("rot"), size: 3 }],
      errors: [{ digest, message: "quarantine: read-only filesystem" }],
    });
    expect(report.mismatches[0]!.quarantinedAs).toBeUndefined();
    expect(await inner.stat(dataKey(digest))).toMatchObject({ size: 3 });
  });

  it("ignores keys under blobs/ that are not a blob's data", async () => {
    const storage = memoryStorage();
    await storage.write("blobs/sha256/zz/not-a-digest/data", bytes("x"));
    await storage.write(`blobs/sha256/00/${"a".repeat(64)}/data`, bytes("in the wrong folder"));
    await storage.write("blobs/md5/aa/aa/data", bytes("x"));
    const report = await verifyBlobs(storage, { quarantine: true });
    expect(report).toMatchObject({ checked: 0, mismatches: [], errors: [] });
  });

  it("refuses bad options with a clear error", async () => {
    const storage = memoryStorage();
    await expect(verifyBlobs(storage, { concurrency: 0 })).rejects.toThrow("concurrency must be an integer from 1 to 256, got 0");
    await expect(verifyBlobs(storage, { concurrency: 1.5 })).rejects.toThrow("concurrency must be an integer from 1 to 256, got 1.5");
    await expect(verifyBlobs(storage, { after: "latest" })).rejects.toThrow('after must be a digest such as "sha256:<64 hex digits>", got "latest"');
  });
});
