import { describe, expect, it } from "vitest";
import { collectGarbage, type GcReport } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { allKeys, clockedStorage, HOUR } from "./clocked-storage.js";
import { bytes, imageManifest, pushBlob, req, sha256, type Handler } from "./helpers.js";


interface Image {
  digest: string;
  config: string;
  layers: string[];
  manifest: string;
}

/** Push config + layers (reusing a layer by content is fine) and a manifest under `reference`. */
async function push(registry: Handler, name: string, reference: string, layerTexts: string[], seed = reference): Promise<Image> {
  const configText = JSON.stringify({ architecture: "amd64", os: "linux", seed, name });
  const config = await pushBlob(registry, name, configText);
  const layers: string[] = [];
  for (const text of layerTexts) layers.push(await pushBlob(registry, name, text));
  const manifest = imageManifest(config, bytes(configText).byteLength, layers.map((digest, i) => ({ digest, size: bytes(layerTexts[i]!).byteLength })));
  const ref = reference.startsWith("untagged-") ? sha256(manifest) : reference;
  const put = await registry(req("PUT", `/v2/${name}/manifests/${ref}`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
  if (put.status !== 201) throw new Error(`manifest PUT ${put.status} ${await put.text()}`);
  return { digest: sha256(manifest), config, layers, manifest };
}

async function putJson(registry: Handler, name: string, reference: string, doc: unknown, type: string): Promise<string> {
  const body = JSON.stringify(doc);
  const ref = reference.startsWith("untagged-") ? sha256(body) : reference;
  const put = await registry(req("PUT", `/v2/${name}/manifests/${ref}`, { body, headers: { "content-type": type } }));
  if (put.status !== 201) throw new Error(`PUT ${put.status} ${await put.text()}`);
  return sha256(body);
}

/** Pull a tag and every blob it references; throws when anything is missing or wrong. */
async function pull(registry: Handler, name: string, reference: string): Promise<void> {
  const res = await registry(req("GET", `/v2/${name}/manifests/${reference}`));
  if (res.status !== 200) throw new Error(`manifest ${name}:${reference} → ${res.status}`);
  const doc = (await res.json()) as { config?: { digest: string }; layers?: { digest: string }[]; manifests?: { digest: string }[] };
  for (const child of doc.manifests ?? []) await pull(registry, name, child.digest);
  for (const d of [...(doc.config ? [doc.config] : []), ...(doc.layers ?? [])]) {
    const blob = await registry(req("GET", `/v2/${name}/blobs/${d.digest}`));
    if (blob.status !== 200) throw new Error(`blob ${d.digest} → ${blob.status}`);
    expect(sha256(new Uint8Array(await blob.arrayBuffer()))).toBe(d.digest);
  }
}

const del = (registry: Handler, name: string, reference: string) => registry(req("DELETE", `/v2/${name}/manifests/${reference}`));
const blobStatus = async (registry: Handler, name: string, digest: string) => (await registry(req("HEAD", `/v2/${name}/blobs/${digest}`))).status;

describe("collectGarbage", () => {
  it("dry run reports what would go and changes nothing", async () => {
    const { storage, registry, clock, gc } = clockedStorage();
    const kept = await push(registry, "app", "v1", ["layer-a"]);
    const orphan = await pushBlob(registry, "app", "orphan bytes");
    clock.now += 2 * HOUR;
    const before = await allKeys(storage);
    const report = await gc({ dryRun: true });
    expect(report.dryRun).toBe(true);
    expect(report.blobs.removed).toEqual([orphan]);
    expect(report.bytesFreed).toBe("orphan bytes".length);
    expect(await allKeys(storage)).toEqual(before);
    expect(await blobStatus(registry, "app", orphan)).toBe(200);
    await pull(registry, "app", "v1");
    expect(kept.layers).toHaveLength(1);
  });

  it("removes an unreferenced blob (and its links), keeps referenced ones", async () => {
    const { storage, registry, clock, gc } = clockedStorage();
    const image = await push(registry, "app", "v1", ["layer-a", "layer-b"]);
    const orphan = await pushBlob(registry, "app", "orphan bytes");
    // The same orphan also linked from another repository by a mount.
    const mount = await registry(req("POST", `/v2/other/blobs/uploads/?mount=${orphan}&from=app`));
    expect(mount.status).toBe(201);
    clock.now += 2 * HOUR;
    const report = await gc();
    expect(report.blobs.removed).toEqual([orphan]);
    expect(report.blobs.linksRemoved).toBe(2);
    expect(report.blobs.scanned).toBe(5); // config, 2 layers, manifest, orphan
    expect(await blobStatus(registry, "app", orphan)).toBe(404);
    expect(await blobStatus(registry, "other", orphan)).toBe(404);
    expect((await storage.list("repositories/other/_layers")).keys).toEqual([]);
    await pull(registry, "app", "v1");
    expect(image.layers).toHaveLength(2);
    // A second run finds nothing.
    const again = await gc();
    expect(again.blobs.removed).toEqual([]);
    expect(again.bytesFreed).toBe(0);
  });

  it("keeps a shared layer while any manifest, in any repository, uses it", async () => {
    const { registry, clock, gc } = clockedStorage();
    const a = await push(registry, "team/a", "v1", ["shared base", "only a"]);
    const b = await push(registry, "team/b", "v1", ["shared base", "only b"]);
    expect(a.layers[0]).toBe(b.layers[0]);
    expect((await del(registry, "team/a", a.digest)).status).toBe(202);
    clock.now += 2 * HOUR;
    const first = await gc();
    // a's own layer, config and manifest bytes go; the shared base stays.
    expect(new Set(first.blobs.removed)).toEqual(new Set([a.layers[1], a.config, a.digest]));
    expect(await blobStatus(registry, "team/b", b.layers[0]!)).toBe(200);
    expect(await blobStatus(registry, "team/a", a.layers[0]!)).toBe(200); // still linked in a: the blob is kept
    await pull(registry, "team/b", "v1");

    expect((await del(registry, "team/b", b.digest)).status).toBe(202);
    const second = await gc();
    expect(second.blobs.removed).toContain(b.layers[0]);
    expect(await blobStatus(registry, "team/a", a.layers[0]!)).toBe(404);
  });

  it("keeps the children of an index (and their blobs), even when untagged and with removeUntagged", async () => {
    const { registry, clock, gc } = clockedStorage();
    const amd = await push(registry, "multi", untaggedRef(), ["amd64 layer"], "amd");
    const arm = await push(registry, "multi", untaggedRef(), ["arm64 layer"], "arm");
    const index = await putJson(registry, "multi", "latest", {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [amd, arm].map((m) => ({ mediaType: "application/vnd.oci.image.manifest.v1+json", digest: m.digest, size: m.manifest.length })),
    }, "application/vnd.oci.image.index.v1+json");
    clock.now += 2 * HOUR;
    const report = await gc({ removeUntagged: true });
    expect(report.manifests.removed).toEqual([]);
    expect(report.blobs.removed).toEqual([]);
    await pull(registry, "multi", "latest");
    expect(index).toMatch(/^sha256:/);
  });

  it("removes untagged manifests only with removeUntagged; referrers follow their subject", async () => {
    const { registry, clock, gc } = clockedStorage();
    const old = await push(registry, "app", "v1", ["old layer"], "old");
    const current = await push(registry, "app", "v1", ["new layer"], "new"); // v1 moves: old is untagged now
    const signature = await putJson(registry, "app", "sig-current", {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      artifactType: "application/vnd.example.sig",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: await pushBlob(registry, "app", "{}"), size: 2 },
      layers: [{ mediaType: "application/octet-stream", digest: await pushBlob(registry, "app", "signature of new"), size: 16 }],
      subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: current.digest, size: current.manifest.length },
    }, "application/vnd.oci.image.manifest.v1+json");
    // untag the signature: it is kept only as a referrer of the tagged image
    expect((await del(registry, "app", "sig-current")).status).toBe(202);
    const oldSig = await putJson(registry, "app", untaggedRef(), {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      artifactType: "application/vnd.example.sig",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha256("{}"), size: 2 },
      layers: [{ mediaType: "application/octet-stream", digest: await pushBlob(registry, "app", "signature of old"), size: 16 }],
      subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: old.digest, size: old.manifest.length },
    }, "application/vnd.oci.image.manifest.v1+json");
    clock.now += 2 * HOUR;

    const plain = await gc();
    expect(plain.manifests.removed).toEqual([]);
    expect(plain.blobs.removed).toEqual([]);
    expect((await registry(req("GET", `/v2/app/manifests/${old.digest}`))).status).toBe(200);

    const report = await gc({ removeUntagged: true });
    expect(new Set(report.manifests.removed)).toEqual(new Set([`app@${old.digest}`, `app@${oldSig}`]));
    expect(new Set(report.blobs.removed)).toEqual(new Set([old.digest, old.config, old.layers[0], oldSig, sha256("signature of old")]));
    expect((await registry(req("GET", `/v2/app/manifests/${old.digest}`))).status).toBe(404);
    expect((await registry(req("GET", `/v2/app/manifests/${signature}`))).status).toBe(200);
    const referrers = (await (await registry(req("GET", `/v2/app/referrers/${current.digest}`))).json()) as { manifests: { digest: string }[] };
    expect(referrers.manifests.map((m) => m.digest)).toEqual([signature]);
    const gone = (await (await registry(req("GET", `/v2/app/referrers/${old.digest}`))).json()) as { manifests: unknown[] };
    expect(gone.manifests).toEqual([]);
    await pull(registry, "app", "v1");
  });

  it("never removes what is younger than the grace period", async () => {
    const { registry, clock, gc } = clockedStorage();
    const orphan = await pushBlob(registry, "app", "uploaded just now");
    const untagged = await push(registry, "app", untaggedRef(), ["untagged layer"], "u");
    let report: GcReport = await gc({ removeUntagged: true });
    expect(report.blobs.removed).toEqual([]);
    expect(report.manifests.removed).toEqual([]);
    expect(report.blobs.protected).toBe(1);
    expect(await blobStatus(registry, "app", orphan)).toBe(200);

    clock.now += 30 * 60 * 1000; // 30 minutes: still inside the default hour
    report = await gc({ removeUntagged: true });
    expect(report.blobs.removed).toEqual([]);
    report = await gc({ removeUntagged: true, gracePeriodSeconds: 600 });
    expect(report.blobs.removed).toContain(orphan);
    expect(report.manifests.removed).toEqual([`app@${untagged.digest}`]);
  });

  it("a fresh link protects an old blob (re-linked by a mount or a push)", async () => {
    const { registry, clock, gc } = clockedStorage();
    const blob = await pushBlob(registry, "app", "old orphan");
    clock.now += 2 * HOUR;
    expect((await registry(req("POST", `/v2/fresh/blobs/uploads/?mount=${blob}&from=app`))).status).toBe(201);
    const report = await gc();
    expect(report.blobs.removed).toEqual([]);
    expect(report.blobs.protected).toBe(1);
    expect(await blobStatus(registry, "fresh", blob)).toBe(200);
  });

  it("removes uploads older than the upload max age and leaves the others", async () => {
    const { registry, clock, gc } = clockedStorage();
    const start = async () => {
      const post = await registry(req("POST", "/v2/app/blobs/uploads/"));
      const location = new URL(post.headers.get("location")!);
      const patch = await registry(req("PATCH", location.href, { body: bytes("0123456789"), headers: { "content-type": "application/octet-stream" } }));
      expect(patch.status).toBe(202);
      return patch.headers.get("location")!;
    };
    const stale = await start();
    clock.now += 8 * 24 * HOUR;
    const active = await start();
    const report = await gc({ dryRun: true });
    expect(report.uploads.scanned).toBe(2);
    expect(report.uploads.removed).toHaveLength(1);
    expect(report.uploads.bytes).toBe(10);
    const real = await gc();
    expect(real.uploads.removed).toEqual(report.uploads.removed);
    expect(real.bytesFreed).toBe(10);
    expect((await registry(req("GET", active))).status).toBe(204);
    expect((await registry(req("GET", stale))).status).toBe(404);
  });

  it("reports the bytes freed exactly", async () => {
    const { registry, clock, gc } = clockedStorage();
    const sizes = [1, 1000, 65_537];
    const digests: string[] = [];
    for (const size of sizes) {
      const data = new Uint8Array(size).fill(size % 251);
      digests.push(await pushBlob(registry, "app", data));
    }
    const image = await push(registry, "app", "v1", ["kept"]);
    expect((await del(registry, "app", image.digest)).status).toBe(202);
    clock.now += 2 * HOUR;
    const report = await gc();
    const manifestBytes = bytes(image.manifest).byteLength;
    const configBytes = JSON.stringify({ architecture: "amd64", os: "linux", seed: "v1", name: "app" }).length;
    expect(report.blobs.bytes).toBe(1 + 1000 + 65_537 + manifestBytes + configBytes + "kept".length);
    expect(report.bytesFreed).toBe(report.blobs.bytes);
    expect(report.blobs.removed).toHaveLength(6);
  });

  it("takes blob sizes and ages from the listing where the driver gives them: no stat per blob, the same report", async () => {
    const { storage, registry, clock } = clockedStorage();
    for (let i = 0; i < 5; i++) await pushBlob(registry, "app", `orphan ${i}`);
    await push(registry, "app", "v1", ["kept"]);
    clock.now += 2 * HOUR;
    const counted = (listInfo: boolean) => {
      const stats: string[] = [];
      const view: StorageDriver = {
        ...storage,
        stat: async (key) => (stats.push(key), storage.stat(key)),
        list: async (prefix, options) => {
          const page = await storage.list(prefix, options);
          return listInfo ? page : { keys: page.keys, truncated: page.truncated };
        },
      };
      return { stats, run: () => collectGarbage(view, { dryRun: true, now: () => new Date(clock.now) }) };
    };
    const withInfo = counted(true);
    const withoutInfo = counted(false);
    const [a, b] = [await withInfo.run(), await withoutInfo.run()];
    expect(a).toEqual(b);
    expect(a.blobs.removed).toHaveLength(5);
    expect(a.blobs.bytes).toBe("orphan 0".length * 5);
    const blobStats = (keys: string[]) => keys.filter((k) => k.startsWith("blobs/")).length;
    expect([blobStats(withInfo.stats), blobStats(withoutInfo.stats)]).toEqual([0, 5]);
  });

  it("a push racing the GC leaves a pullable image", { timeout: 600_000 }, async () => {
    for (let round = 0; round < Number(process.env.GC_RACE_ROUNDS ?? 5); round++) {
      const { registry, clock, gc } = clockedStorage(true);
      // Old garbage, and an old image sharing a layer with the one pushed during the GC.
      for (let i = 0; i < 5; i++) {
        const image = await push(registry, "app", `old${i}`, [`garbage ${i}`, "shared base"]);
        expect((await del(registry, "app", image.digest)).status).toBe(202);
      }
      await push(registry, "base", "v1", ["shared base"]);
      for (let i = 0; i < 5; i++) await pushBlob(registry, "app", `orphan ${i}`);
      clock.now += 2 * HOUR;

      const collecting = gc({ removeUntagged: true });
      const pushes = Promise.all([
        push(registry, "app", "new", ["fresh layer", "shared base", `garbage ${round}`]),
        push(registry, "other", "v1", ["other layer"]),
      ]);
      const [report] = await Promise.all([collecting, pushes]);
      await pull(registry, "app", "new");
      await pull(registry, "other", "v1");
      await pull(registry, "base", "v1");
      expect(report.blobs.removed).toContain(sha256("orphan 0"));
      // A later run (everything old now) keeps the tagged images.
      clock.now += 2 * HOUR;
      await gc({ removeUntagged: true });
      await pull(registry, "app", "new");
      await pull(registry, "other", "v1");
    }
  });
});

let refCounter = 0;
/** A reference meaning "push untagged": `push` and `putJson` PUT such manifests by their digest. */
function untaggedRef(): string {
  return `untagged-${++refCounter}`;
}
