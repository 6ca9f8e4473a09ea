/**
 * Stateful model-based test of the registry: random sequences of push
 * (monolithic and chunked), mount, manifest put, pull, tag/manifest/blob
 * delete and listing, checked step by step against an in-memory model, on
 * memory and fs storage. After each sequence every stored object verifies.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { imageManifest, sha256 } from "../registry/helpers.js";
import { PROPERTY_TIMEOUT, SEQUENCE_RUNS, checkRegistryResponse, counter, params, send, verifyAllBlobs } from "./support.js";

const BASE = "http://reg.test";
const REPOS = ["lib/a", "lib/b", "c"] as const;
const TAGS = ["v1", "v2", "latest"] as const;
const CONTENTS = ["config-0", "layer-one", "layer-two", "", "layer-three-" + "x".repeat(3000)].map((t) => new TextEncoder().encode(t));
const DIGESTS = CONTENTS.map((c) => sha256(c));

type Op =
  | { op: "pushBlob"; repo: number; blob: number; chunked: boolean }
  | { op: "mount"; repo: number; from: number; blob: number }
  | { op: "putManifest"; repo: number; tag: number; layers: number[]; byDigest: boolean }
  | { op: "getManifest"; repo: number; tag: number; byDigest: boolean }
  | { op: "getBlob"; repo: number; blob: number; head: boolean }
  | { op: "deleteTag"; repo: number; tag: number }
  | { op: "deleteManifest"; repo: number; tag: number }
  | { op: "deleteBlob"; repo: number; blob: number }
  | { op: "listTags"; repo: number }
  | { op: "catalog" };

const repo = fc.nat(REPOS.length - 1);
const tag = fc.nat(TAGS.length - 1);
const blob = fc.nat(CONTENTS.length - 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("pushBlob" as const), repo, blob, chunked: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("mount" as const), repo, from: repo, blob }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("putManifest" as const), repo, tag, layers: fc.array(fc.integer({ min: 1, max: CONTENTS.length - 1 }), { minLength: 1, maxLength: 3 }), byDigest: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("getManifest" as const), repo, tag, byDigest: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("getBlob" as const), repo, blob, head: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("deleteTag" as const), repo, tag }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("deleteManifest" as const), repo, tag }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("deleteBlob" as const), repo, blob }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("listTags" as const), repo }) },
  { weight: 1, arbitrary: fc.constant({ op: "catalog" as const }) },
);

interface RepoModel {
  blobs: Set<string>;
  manifests: Map<string, string>;
  tags: Map<string, string>;
}

/** The manifest text for a tag and layers: config CONTENTS[0], layers as given (the tag is an annotation, so each tag differs). */
function manifestFor(tagName: string, layers: number[]): string {
  return imageManifest(DIGESTS[0]!, CONTENTS[0]!.byteLength, layers.map((i) => ({ digest: DIGESTS[i]!, size: CONTENTS[i]!.byteLength })), undefined, { annotations: { tag: tagName } });
}

async function run(registry: (r: Request) => Promise<Response>, ops: Op[]): Promise<void> {
  const model = new Map<string, RepoModel>(REPOS.map((r) => [r, { blobs: new Set(), manifests: new Map(), tags: new Map() }]));
  const catalog = new Set<string>();
  const call = async (method: string, path: string, init: RequestInit = {}) => {
    const response = await send(registry, new Request(path.startsWith("http") ? path : BASE + path, { method, ...init }));
    const text = await checkRegistryResponse(response, method);
    return { response, text, status: response.status };
  };
  // The digest a tag resolves to in the model (for by-digest operations on a tag that may be gone, use the last manifest written under it).
  const lastDigest = new Map<string, string>();

  for (const op of ops) {
    const name = REPOS[(op as { repo?: number }).repo ?? 0]!;
    const m = model.get(name)!;
    switch (op.op) {
      case "pushBlob": {
        const data = CONTENTS[op.blob]!;
        const start = await call("POST", `/v2/${name}/blobs/uploads/`);
        expect(start.status).toBe(202);
        let location = start.response.headers.get("location")!;
        if (op.chunked && data.byteLength > 1) {
          const half = data.byteLength >> 1;
          for (const [a, b] of [[0, half], [half, data.byteLength]] as const) {
            const patch = await call("PATCH", location, { body: data.slice(a, b), headers: { "content-range": `${a}-${b - 1}`, "content-type": "application/octet-stream" } });
            expect(patch.status).toBe(202);
            location = patch.response.headers.get("location")!;
          }
          const url = new URL(location);
          url.searchParams.set("digest", DIGESTS[op.blob]!);
          expect((await call("PUT", url.href)).status).toBe(201);
        } else {
          const url = new URL(location);
          url.searchParams.set("digest", DIGESTS[op.blob]!);
          expect((await call("PUT", url.href, { body: data })).status).toBe(201);
        }
        m.blobs.add(DIGESTS[op.blob]!);
        catalog.add(name);
        break;
      }
      case "mount": {
        const from = REPOS[op.from]!;
        const d = DIGESTS[op.blob]!;
        const r = await call("POST", `/v2/${name}/blobs/uploads/?mount=${d}&from=${from}`);
        if (model.get(from)!.blobs.has(d)) {
          expect(r.status).toBe(201);
          m.blobs.add(d);
          catalog.add(name);
        } else {
          expect(r.status).toBe(202);
          expect((await call("DELETE", r.response.headers.get("location")!)).status).toBe(204);
        }
        break;
      }
      case "putManifest": {
        const t = TAGS[op.tag]!;
        const text = manifestFor(t, op.layers);
        const digest = sha256(text);
        const r = await call("PUT", `/v2/${name}/manifests/${op.byDigest ? digest : t}`, { body: text, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
        const complete = [0, ...op.layers].every((i) => m.blobs.has(DIGESTS[i]!));
        if (complete) {
          expect(r.status).toBe(201);
          expect(r.response.headers.get("docker-content-digest")).toBe(digest);
          m.manifests.set(digest, text);
          if (!op.byDigest) m.tags.set(t, digest);
          lastDigest.set(`${name}:${t}`, digest);
          catalog.add(name);
        } else {
          expect(r.status).toBe(400);
          expect(JSON.parse(r.text).errors[0].code).toBe("MANIFEST_BLOB_UNKNOWN");
        }
        break;
      }
      case "getManifest": {
        const t = TAGS[op.tag]!;
        const digest = op.byDigest ? lastDigest.get(`${name}:${t}`) ?? sha256(manifestFor(t, [1])) : undefined;
        const r = await call("GET", `/v2/${name}/manifests/${digest ?? t}`);
        const want = digest !== undefined ? m.manifests.get(digest) : m.tags.has(t) ? m.manifests.get(m.tags.get(t)!) : undefined;
        if (want === undefined) {
          expect(r.status).toBe(404);
          expect(JSON.parse(r.text).errors[0].code).toBe("MANIFEST_UNKNOWN");
        } else {
          expect(r.status).toBe(200);
          expect(r.text).toBe(want);
          expect(r.response.headers.get("docker-content-digest")).toBe(sha256(want));
        }
        break;
      }
      case "getBlob": {
        const d = DIGESTS[op.blob]!;
        const r = await call(op.head ? "HEAD" : "GET", `/v2/${name}/blobs/${d}`);
        if (m.blobs.has(d)) {
          expect(r.status).toBe(200);
          expect(r.response.headers.get("content-length")).toBe(String(CONTENTS[op.blob]!.byteLength));
          if (!op.head) expect(sha256(new TextEncoder().encode(r.text))).toBe(d);
        } else expect(r.status).toBe(404);
        break;
      }
      case "deleteTag": {
        const t = TAGS[op.tag]!;
        const r = await call("DELETE", `/v2/${name}/manifests/${t}`);
        expect(r.status).toBe(m.tags.has(t) ? 202 : 404);
        m.tags.delete(t);
        break;
      }
      case "deleteManifest": {
        const digest = lastDigest.get(`${name}:${TAGS[op.tag]!}`) ?? sha256(manifestFor(TAGS[op.tag]!, [1]));
        const r = await call("DELETE", `/v2/${name}/manifests/${digest}`);
        expect(r.status).toBe(m.manifests.has(digest) ? 202 : 404);
        // Its last manifest gone, a repository leaves the catalog (its blob links stay until GC).
        if (m.manifests.delete(digest) && m.manifests.size === 0) catalog.delete(name);
        for (const [k, v] of m.tags) if (v === digest) m.tags.delete(k);
        break;
      }
      case "deleteBlob": {
        const d = DIGESTS[op.blob]!;
        const r = await call("DELETE", `/v2/${name}/blobs/${d}`);
        expect(r.status).toBe(m.blobs.has(d) ? 202 : 404);
        m.blobs.delete(d);
        break;
      }
      case "listTags": {
        const r = await call("GET", `/v2/${name}/tags/list`);
        // Unknown only when nothing of it is left: out of the catalog and no blob link, manifest or tag.
        const known = catalog.has(name) || m.blobs.size > 0 || m.manifests.size > 0 || m.tags.size > 0;
        if (!known) expect(r.status).toBe(404);
        else {
          expect(r.status).toBe(200);
          expect(JSON.parse(r.text)).toEqual({ name, tags: [...m.tags.keys()].sort() });
        }
        break;
      }
      case "catalog": {
        const r = await call("GET", "/v2/_catalog");
        expect(JSON.parse(r.text)).toEqual({ repositories: [...catalog].sort() });
        break;
      }
    }
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  console.log(`model fuzz: ${counter.requests} requests`);
}, 120_000);

const drivers: [string, () => Promise<StorageDriver>][] = [
  ["memory", async () => memoryStorage()],
  [
    "fs",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "rk-model-"));
      dirs.push(dir);
      return fsStorage({ root: dir, fsync: false });
    },
  ],
];

describe.each(drivers)("registry against a model (%s storage)", (_, make) => {
  it(
    "random operation sequences match the model, and every stored object verifies",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40, size: "max" }), async (ops) => {
          const storage = await make();
          const registry = createRegistry({ storage, uploadSecret: "model", deleteEnabled: true, log: (e) => { if (e.level === "error") throw new Error(`error log: ${String(e.msg)}`); } });
          await run(registry, ops);
          await verifyAllBlobs(storage);
          await storage.close?.();
          for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
        }),
        params(SEQUENCE_RUNS),
      );
    },
    PROPERTY_TIMEOUT,
  );
});
