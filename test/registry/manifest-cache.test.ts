/**
 * The manifest cache on its own: each (repository, tag) and (repository,
 * digest) keeps its own entry, whatever was asked just before, and an entry
 * is offered for at most `maxAgeMs`. Whether an offered entry is still the
 * stored object is the base store's answer (`known`, one stat): see the
 * revalidation tests in test/registry/stores.test.ts.
 */
import { describe, expect, it } from "vitest";
import { parseDigest } from "../../src/oci/digest.js";
import { ManifestCache } from "../../src/registry/manifest-cache.js";
import type { ResolvedTag, StoredManifest } from "../../src/registry/stores/types.js";

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
