/**
 * Model-based property test (fast-check): any sequence of pushes, tag and
 * manifest deletes, garbage collections with retention and clock steps, on a
 * registry with immutable tags and a quota, never leaves a tag pointing at
 * missing content, never moves or removes an immutable tag, and keeps the
 * quota usage equal to a recount from scratch and within the limit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { immutableTags, quota } from "../../src/registry/index.js";
import { clockedStorage, HOUR } from "./clocked-storage.js";
import { bytes, imageManifest, pushBlob, req, sha256, type Handler } from "./helpers.js";

const REPOS = ["a/one", "a/two", "b/one"] as const;
const TAGS = ["v1", "v2", "latest", "dev"] as const;
const LIMIT = 2600;
const OCI = "application/vnd.oci.image.manifest.v1+json";

type Op =
  | { kind: "push"; repo: number; tag: number; image: number }
  | { kind: "deleteTag"; repo: number; tag: number }
  | { kind: "deleteManifest"; repo: number; image: number }
  | { kind: "gc"; keepLast: number; removeUntagged: boolean }
  | { kind: "tick"; hours: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("push" as const), repo: fc.nat(REPOS.length - 1), tag: fc.nat(TAGS.length - 1), image: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("deleteTag" as const), repo: fc.nat(REPOS.length - 1), tag: fc.nat(TAGS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteManifest" as const), repo: fc.nat(REPOS.length - 1), image: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("gc" as const), keepLast: fc.nat(2), removeUntagged: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const), hours: fc.integer({ min: 1, max: 3 }) }) },
);

/** Image `i`: a config and two layers; layer sizes 300 to 800 bytes, the second layer shared by images of equal parity. */
function image(i: number): { config: string; layers: Uint8Array<ArrayBuffer>[] } {
  return {
    config: JSON.stringify({ image: i }),
    layers: [new Uint8Array(300 + 100 * i).fill(65 + i), new Uint8Array(400).fill(97 + (i % 2))],
  };
}

/** Push image `i` as a client would; a blob the quota refuses is left out (the manifest PUT then finds it unknown). */
async function push(registry: Handler, name: string, tag: string, i: number): Promise<{ status: number; digest: string; blobRefused: boolean }> {
  const { config, layers } = image(i);
  let blobRefused = false;
  for (const blob of [bytes(config), ...layers]) {
    await pushBlob(registry, name, blob).catch((error: Error) => {
      expect(error.message).toMatch(/^PUT 403 .*quota exceeded for a\/\*: this blob adds/);
      blobRefused = true;
    });
  }
  const manifest = imageManifest(sha256(config), bytes(config).byteLength, layers.map((l) => ({ digest: sha256(l), size: l.byteLength })));
  const put = await registry(req("PUT", `/v2/${name}/manifests/${tag}`, { body: manifest, headers: { "content-type": OCI } }));
  return { status: put.status, digest: sha256(manifest), blobRefused };
}

/** Every tag of every repository resolves to a manifest whose blobs are all there, byte for byte. */
async function checkTags(registry: Handler): Promise<Map<string, string>> {
  const tags = new Map<string, string>();
  for (const name of REPOS) {
    const list = await registry(req("GET", `/v2/${name}/tags/list`));
    if (list.status !== 200) continue;
    for (const tag of ((await list.json()) as { tags: string[] }).tags) {
      const res = await registry(req("GET", `/v2/${name}/manifests/${tag}`));
      expect(res.status, `${name}:${tag}`).toBe(200);
      const doc = (await res.json()) as { config: { digest: string }; layers: { digest: string }[] };
      for (const d of [doc.config, ...doc.layers]) {
        const blob = await registry(req("GET", `/v2/${name}/blobs/${d.digest}`));
        expect(blob.status, `${name}:${tag} blob ${d.digest}`).toBe(200);
        expect(sha256(new Uint8Array(await blob.arrayBuffer()))).toBe(d.digest);
      }
      tags.set(`${name}:${tag}`, res.headers.get("docker-content-digest")!);
    }
  }
  return tags;
}

describe("policies model", () => {
  it("pushes, deletes, GC and retention keep tags whole, immutable tags fixed, quota usage equal to a recount", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        const immutable = immutableTags(["v*"]);
        const quotas = quota({ "a/*": LIMIT });
        const { storage, registry, clock, gc } = clockedStorage(false, { policies: [immutable, quotas] });
        const fixed = new Map<string, string>();
        for (const o of ops) {
          // A millisecond per step: the manifest cache tells a rewritten tag link by its size and modification time.
          clock.now += 1;
          if (o.kind === "push") {
            const name = REPOS[o.repo]!;
            const tag = TAGS[o.tag]!;
            const { status, digest, blobRefused } = await push(registry, name, tag, o.image);
            expect(blobRefused ? [400, 403] : [201, 403]).toContain(status);
            if (status === 201 && immutable.protects(name, tag) && !fixed.has(`${name}:${tag}`)) fixed.set(`${name}:${tag}`, digest);
          } else if (o.kind === "deleteTag") {
            const status = (await registry(req("DELETE", `/v2/${REPOS[o.repo]}/manifests/${TAGS[o.tag]}`))).status;
            expect([202, 403, 404]).toContain(status);
          } else if (o.kind === "deleteManifest") {
            const { config, layers } = image(o.image);
            const digest = sha256(imageManifest(sha256(config), bytes(config).byteLength, layers.map((l) => ({ digest: sha256(l), size: l.byteLength }))));
            const status = (await registry(req("DELETE", `/v2/${REPOS[o.repo]}/manifests/${digest}`))).status;
            expect([202, 403, 404]).toContain(status);
          } else if (o.kind === "gc") {
            await gc({ gracePeriodSeconds: 0, removeUntagged: o.removeUntagged, retention: [{ repositories: "a/*", keepLast: o.keepLast }], protectTag: immutable.protects });
          } else clock.now += o.hours * HOUR;

          const tags = await checkTags(registry);
          for (const [key, digest] of fixed) expect(tags.get(key), `immutable ${key}`).toBe(digest);
          const [usage] = await quotas.usage(storage);
          const [recount] = await quota({ "a/*": LIMIT }).usage(storage);
          expect(usage).toEqual(recount);
          expect(usage!.used).toBeLessThanOrEqual(LIMIT);
        }
      }),
      { numRuns: 40 },
    );
  });
});
