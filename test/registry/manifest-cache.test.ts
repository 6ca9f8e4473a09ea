/**
 * The manifest cache on its own: each (repository, tag) and (repository,
 * digest) keeps its own entry, whatever was asked just before, and an entry
 * is offered for at most `maxAgeMs`. Whether an offered entry is still the
 * stored object is the base store's answer (`known`, one stat), checked
 * below through the registry: a GET by tag from the cache costs two stats and
 * no read, and a tag moved by another process is seen by the next GET.
 */
import { describe, expect, it } from "vitest";
import { parseDigest } from "../../src/oci/digest.js";
import { ManifestCache, manifestCacheStores } from "../../src/registry/manifest-cache.js";
import type { ManifestWrite, RegistryStores, ResolvedTag, StoredManifest } from "../../src/registry/stores/types.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { pushImage, req } from "./helpers.js";

const digest = (c: string) => parseDigest(`sha256:${c.repeat(64)}`);
const resolved = (d: ReturnType<typeof digest>): ResolvedTag => ({ digest: d, version: "71:1700000000000", modified: 1_700_000_000_000 });
const revision = (d: ReturnType<typeof digest>, bytes: Uint8Array): StoredManifest => ({ digest: d, mediaType: "m", size: bytes.byteLength, bytes, version: "3:1" });

describe("ManifestCache", () => {
  it("keeps tags and revisions apart by repository and by tag or digest, asked in any order", () => {
    const cache = new ManifestCache();
    const names = ["team/app", "team/other", "app"];
    const tags = ["latest", "stable", "v1"];
    const value = (n: number, t: number) => digest("0123456789"[n * 3 + t]!);
    names.forEach((name, n) => tags.forEach((tag, t) => cache.setTag(name, tag, resolved(value(n, t)))));
    names.forEach((name, n) => tags.forEach((_, t) => cache.setRevision(name, revision(value(0, t), new Uint8Array([n, t, 0])))));
    // Every pair after every other pair (the key of the last lookup is kept).
    for (let round = 0; round < 3; round++) {
      for (let a = 0; a < 9; a++) {
        for (const k of [a, (a * 5 + round) % 9]) {
          const [n, t] = [Math.floor(k / 3), k % 3];
          expect(cache.tag(names[n]!, tags[t]!)?.digest.value).toBe(value(n, t).value);
          expect(cache.revision(names[n]!, value(0, t).value)?.bytes).toEqual(new Uint8Array([n, t, 0]));
        }
      }
    }
    expect(cache.tag("team/app", "missing")).toBeUndefined();
    expect(cache.revision("team/missing", value(0, 0).value)).toBeUndefined();
  });

  it("an entry older than maxAgeMs, or dropped, is a miss; revisions without bytes are not kept", () => {
    let now = 1_000;
    const cache = new ManifestCache(60_000, () => now);
    const d = digest("a");
    const entry = resolved(d);
    cache.setTag("r", "t", entry);
    expect(cache.tag("r", "t")).toBe(entry);
    cache.dropTag("r", "t");
    expect(cache.tag("r", "t")).toBeUndefined();
    cache.setTag("r", "t", entry);
    now += 59_999;
    expect(cache.tag("r", "t")).toBe(entry);
    now += 1;
    expect(cache.tag("r", "t")).toBeUndefined();
    const { bytes: _none, ...large } = revision(d, new Uint8Array(3));
    cache.setRevision("r", { ...large, body: async () => undefined });
    expect(cache.revision("r", d.value)).toBeUndefined();
  });
});

describe("the manifest cache wrapper over the base stores", () => {
  /** Memory storage counting stats and reads. */
  function counting(): { storage: StorageDriver; calls: { stat: number; read: number } } {
    const inner = memoryStorage();
    const calls = { stat: 0, read: 0 };
    const storage: StorageDriver = {
      ...inner,
      name: "counting",
      stat: (key) => (calls.stat++, inner.stat(key)),
      read: (key, range) => (calls.read++, inner.read(key, range)),
    };
    return { storage, calls };
  }

  it("a repeated GET by tag costs one stat of the tag link and one of the revision, and reads nothing", async () => {
    const { storage, calls } = counting();
    const registry = createRegistry({ storage, uploadSecret: "s" });
    const image = await pushImage(registry, "team/app", "v1");
    expect((await registry(req("GET", "/v2/team/app/manifests/v1"))).status).toBe(200);
    calls.stat = 0;
    calls.read = 0;
    const again = await registry(req("GET", "/v2/team/app/manifests/v1"));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(image.manifest);
    expect(calls).toEqual({ stat: 2, read: 0 });
  });

  it("a tag moved by another registry on the same storage is served at once by the next GET", async () => {
    const storage = memoryStorage();
    const one = createRegistry({ storage, uploadSecret: "s" });
    const two = createRegistry({ storage, uploadSecret: "s" });
    await pushImage(one, "team/app", "v1", "first");
    expect((await one(req("GET", "/v2/team/app/manifests/v1"))).status).toBe(200);
    // The link is rewritten within the same millisecond at most by chance: wait one so its time differs.
    await new Promise((r) => setTimeout(r, 2));
    const second = await pushImage(two, "team/app", "v1", "second-and-longer");
    const served = await one(req("GET", "/v2/team/app/manifests/v1"));
    expect(served.headers.get("docker-content-digest")).toBe(second.digest);
  });
});

describe("the manifest cache wrapper on writes through it", () => {
  it("a tag set, deleted or pushed through the registry is resolved afresh, even when its version looks unchanged", async () => {
    const a = parseDigest(`sha256:${"a".repeat(64)}`);
    const b = parseDigest(`sha256:${"b".repeat(64)}`);
    let current = a;
    let asked: ResolvedTag | undefined;
    // A base that answers `known` whenever it is given one: what a link rewritten with the same size within one
    // millisecond looks like to a stat.
    const below = {
      tags: {
        resolve: async (_n: string, _t: string, _c: unknown, known?: ResolvedTag) => (asked = known) ?? { digest: current, version: "same" },
        set: async (_n: string, _t: string, d: typeof a) => void (current = d),
        delete: async () => "",
      },
      manifests: { put: async () => ({ created: false }), delete: async () => ({ untagged: ["t"], emptied: false }) },
    } as unknown as RegistryStores;
    const stores = manifestCacheStores()(below);
    expect((await stores.tags.resolve("r", "t", {}))?.digest).toEqual(a);
    expect((await stores.tags.resolve("r", "t", {}))?.digest).toEqual(a);
    expect(asked).toBeDefined();
    await stores.tags.set("r", "t", b, {});
    expect((await stores.tags.resolve("r", "t", {}))?.digest).toEqual(b);
    for (const write of [
      () => stores.tags.delete("r", "t", {}),
      () => stores.manifests.put("r", { tag: "t" } as ManifestWrite, {}),
      () => stores.manifests.delete("r", a, {}),
    ]) {
      await stores.tags.resolve("r", "t", {});
      await write();
      await stores.tags.resolve("r", "t", {});
      expect(asked).toBeUndefined();
    }
  });
});
