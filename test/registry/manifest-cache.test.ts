/**
 * The manifest cache on its own: each (repository, tag) and (repository,
 * digest) keeps its own entry, whatever was asked just before, and an entry
 * is used only while the storage object's size and modification time are
 * those it was read with, and for at most `maxAgeMs`.
 */
import { describe, expect, it } from "vitest";
import { parseDigest } from "../../src/oci/digest.js";
import { ManifestCache } from "../../src/registry/manifest-cache.js";

const digest = (c: string) => parseDigest(`sha256:${c.repeat(64)}`);
const info = (size: number, ms: number) => ({ size, modified: new Date(ms) });

describe("ManifestCache", () => {
  it("keeps tags and revisions apart by repository and by tag or digest, asked in any order, with equal validators", () => {
    const cache = new ManifestCache();
    const same = info(71, 1_700_000_000_000);
    const names = ["team/app", "team/other", "app"];
    const tags = ["latest", "stable", "v1"];
    const value = (n: number, t: number) => digest("0123456789"[n * 3 + t]!);
    names.forEach((name, n) => tags.forEach((tag, t) => cache.setTag(name, tag, value(n, t), same)));
    const revision = (n: number, t: number) => ({ meta: { mediaType: "m", size: 3 }, bytes: new Uint8Array([n, t, 0]) });
    names.forEach((name, n) => tags.forEach((_, t) => cache.setRevision(name, value(0, t), revision(n, t), same)));
    // Every pair after every other pair (the key of the last lookup is kept).
    for (let round = 0; round < 3; round++) {
      for (let a = 0; a < 9; a++) {
        for (const k of [a, (a * 5 + round) % 9]) {
          const [n, t] = [Math.floor(k / 3), k % 3];
          expect(cache.tag(names[n]!, tags[t]!, same)?.value).toBe(value(n, t).value);
          expect(cache.revision(names[n]!, value(0, t), same)?.bytes).toEqual(new Uint8Array([n, t, 0]));
        }
      }
    }
    expect(cache.tag("team/app", "missing", same)).toBeUndefined();
    expect(cache.revision("team/missing", value(0, 0), same)).toBeUndefined();
  });

  it("an entry whose object changed size or time, or that is older than maxAgeMs, is a miss and is dropped", () => {
    let now = 1_000;
    const cache = new ManifestCache(60_000, () => now);
    const d = digest("a");
    cache.setTag("r", "t", d, info(71, 5));
    expect(cache.tag("r", "t", info(71, 5))).toBe(d);
    expect(cache.tag("r", "t", info(72, 5))).toBeUndefined();
    expect(cache.tag("r", "t", info(71, 5))).toBeUndefined(); // dropped by the miss
    cache.setTag("r", "t", d, info(71, 5));
    expect(cache.tag("r", "t", info(71, 6))).toBeUndefined();
    cache.setTag("r", "t", d, info(71, 5));
    now += 59_999;
    expect(cache.tag("r", "t", info(71, 5))).toBe(d);
    now += 1;
    expect(cache.tag("r", "t", info(71, 5))).toBeUndefined();
  });
});
