/**
 * docs/architecture.md rule 5 with a real client: handlers are stateless, so several
 * registry processes over one storage continue each other's uploads.
 *
 * Two independent `createRegistry()` instances (separate driver objects over
 * the same fs root, or the same radosgw bucket) with the same `uploadSecret`
 * sit behind a round-robin balancer served by the Node adapter. skopeo's
 * POST, PATCH and PUT of one upload land on different instances, and the push,
 * the byte-for-byte manifest, the pull-back and a cross-repository mount still
 * work. With different secrets, an upload handed to the other instance is
 * refused with a 4xx (the `_state` signature does not verify) — never a 5xx,
 * and skopeo fails.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { s3Storage } from "../../src/storage/s3/index.js";
import type { StorageDriver } from "../../src/storage/index.js";
import { freshRoot, useRadosgw } from "../storage/helpers/rgw.js";
import { buildTestImage, readOciLayout } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { serveRecorded, type RunningService } from "./helpers/serve.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

type Handler = (request: Request) => Promise<Response>;

interface Balanced extends RunningService {
  /** Which instance served each request, in arrival order. */
  routed: Array<{ method: string; path: string; instance: number }>;
}

async function balance(handlers: Handler[]): Promise<Balanced> {
  const routed: Balanced["routed"] = [];
  let next = 0;
  const running = await serveRecorded(async (request) => {
    const instance = next++ % handlers.length;
    const url = new URL(request.url);
    routed.push({ method: request.method, path: url.pathname + url.search, instance });
    return handlers[instance]!(request);
  });
  return { ...running, routed };
}

/** Uploads whose requests were served by more than one instance. */
function crossInstanceUploads(routed: Balanced["routed"]): number {
  const byUpload = new Map<string, Set<number>>();
  for (const r of routed) {
    const m = /\/blobs\/uploads\/([^/?]+)/.exec(r.path);
    if (!m) continue;
    const set = byUpload.get(m[1]!) ?? new Set<number>();
    set.add(r.instance);
    byUpload.set(m[1]!, set);
  }
  // The POST has no upload id in its path; the PATCH and PUT that follow it
  // carry one, so an upload counts when those were served by both instances.
  return [...byUpload.values()].filter((s) => s.size > 1).length;
}

function scenario(name: string, makeStorage: () => StorageDriver) {
  describe(`two registry instances over one ${name}, round-robin`, () => {
    let lb: Balanced;
    let skopeo: SkopeoSandbox;
    const work = tempDir(`stateless-${name}`);
    const ns = `stateless-${randomBytes(3).toString("hex")}`;

    beforeAll(async () => {
      skopeo = skopeoSandbox();
      const secret = randomBytes(32).toString("hex");
      lb = await balance([
        createRegistry({ storage: makeStorage(), uploadSecret: secret }),
        createRegistry({ storage: makeStorage(), uploadSecret: secret }),
      ]);
    });
    afterAll(async () => {
      await lb?.close();
      skopeo?.remove();
      work.remove();
    });

    it("skopeo pushes (uploads continued across instances), serves the manifest byte for byte, pulls back and mounts", async () => {
      const img = buildTestImage(join(work.path, "src"), { sizes: [100_000, 2_000_000, 10, 5_000] });
      const dest = `docker://${lb.host}/${ns}/app:v1`;
      const push = await skopeo.copy(img.ref, dest);
      expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${lb.recorder.dump()}`).toBe(0);
      expect(crossInstanceUploads(lb.routed), JSON.stringify(lb.routed, null, 1)).toBeGreaterThan(0);
      expect(new Set(lb.routed.map((r) => r.instance))).toEqual(new Set([0, 1]));

      expect((await skopeo.inspectRaw(dest)).equals(img.manifestBytes)).toBe(true);
      const back = join(work.path, "back");
      const pull = await skopeo.copy(dest, `oci:${back}:v1`);
      expect(pull.code, describeRun(pull)).toBe(0);
      const got = readOciLayout(back, "v1");
      expect(got.manifestDigest).toBe(img.manifestDigest);
      expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
      for (const [digest, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(digest);

      lb.recorder.clear();
      const copy = await skopeo.copy(dest, `docker://${lb.host}/${ns}/copy:v1`);
      expect(copy.code, describeRun(copy)).toBe(0);
      const mounted = lb.recorder.requests.filter((r) => r.method === "POST" && r.path.includes("mount=") && r.status === 201);
      expect(mounted.length, lb.recorder.dump()).toBe(img.layers.length);
      expect(lb.recorder.requests.filter((r) => r.status >= 500), lb.recorder.dump()).toEqual([]);
    });
  });
}

const sharedFsRoot = tempDir("stateless-fs-root");
afterAll(() => sharedFsRoot.remove());
// one root shared by both instances, each with its own driver object
scenario("fs root", () => fsStorage({ root: join(sharedFsRoot.path, "storage") }));

describe("radosgw (S3)", () => {
  const rgw = useRadosgw({ bucket: "registry-kit-interop" });
  const root = freshRoot("interop");
  scenario("S3 bucket (radosgw)", () => s3Storage({ ...rgw.options(), rootDirectory: root }));
});

describe("two instances with different upload secrets", () => {
  let lb: Balanced;
  let skopeo: SkopeoSandbox;
  const work = tempDir("stateless-secrets");
  const root = tempDir("stateless-secrets-root");

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    const storageRoot = join(root.path, "storage");
    lb = await balance([
      createRegistry({ storage: fsStorage({ root: storageRoot }), uploadSecret: randomBytes(32).toString("hex") }),
      createRegistry({ storage: fsStorage({ root: storageRoot }), uploadSecret: randomBytes(32).toString("hex") }),
    ]);
  });
  afterAll(async () => {
    await lb?.close();
    skopeo?.remove();
    work.remove();
    root.remove();
  });

  it("an upload continued on the instance that did not sign its _state is refused with a 4xx, and skopeo fails", async () => {
    const img = buildTestImage(join(work.path, "src"), { layers: 1 });
    const push = await skopeo.copy(img.ref, `docker://${lb.host}/secrets/app:v1`);
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${lb.recorder.dump()}`).not.toBe(0);
    const refused = lb.recorder.requests.filter((r) => r.path.includes("/blobs/uploads/") && r.status >= 400 && r.status < 500);
    expect(refused.length, lb.recorder.dump()).toBeGreaterThan(0);
    expect(lb.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), lb.recorder.dump()).toEqual([]);
    expect(push.stderr).toMatch(/blob upload (invalid|unknown)/i);
  });
});
