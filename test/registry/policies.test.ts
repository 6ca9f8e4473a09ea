import { describe, expect, it } from "vitest";
import { collectGarbage, createRegistry, deleteRepository, immutableTags, quota, type PendingWrite, type WritePolicy } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, imageManifest, pushBlob, pushImage, req, sha256, type Handler } from "./helpers.js";

const OCI = "application/vnd.oci.image.manifest.v1+json";

function setup(policies: WritePolicy[]) {
  const storage = memoryStorage();
  const registry = createRegistry({ storage, uploadSecret: "policy-test", deleteEnabled: true, policies, callerOf: () => "alice" });
  return { storage, registry };
}

async function denied(response: Response): Promise<{ code: string; message: string; detail: Record<string, unknown> }> {
  expect(response.status).toBe(403);
  const body = (await response.json()) as { errors: { code: string; message: string; detail: Record<string, unknown> }[] };
  expect(body.errors).toHaveLength(1);
  return body.errors[0]!;
}

async function putManifest(registry: Handler, name: string, reference: string, manifest: string): Promise<Response> {
  return registry(req("PUT", `/v2/${name}/manifests/${reference}`, { body: manifest, headers: { "content-type": OCI } }));
}

async function tagOf(registry: Handler, name: string, tag: string): Promise<string | null> {
  const head = await registry(req("HEAD", `/v2/${name}/manifests/${tag}`));
  return head.status === 200 ? head.headers.get("docker-content-digest") : null;
}

async function catalog(registry: Handler): Promise<string[]> {
  return ((await (await registry(req("GET", "/v2/_catalog"))).json()) as { repositories: string[] }).repositories;
}

describe("the pre-commit hook", () => {
  it("sees repository, tag, new and replaced digest, media type, referenced sizes and caller of a push", async () => {
    const seen: PendingWrite[] = [];
    const { registry } = setup([{ check: (write) => void seen.push(write) }]);
    const first = await pushImage(registry, "app", "v1", "a");
    const second = await pushImage(registry, "app", "v1", "b");
    const pushes = seen.filter((w) => w.action === "push");
    expect(pushes).toHaveLength(2);
    const [one, two] = pushes as [PendingWrite, PendingWrite];
    expect(one).toMatchObject({ repository: "app", tag: "v1", digest: first.digest, replaces: undefined, mediaType: OCI, caller: "alice" });
    expect(two).toMatchObject({ repository: "app", tag: "v1", digest: second.digest, replaces: first.digest });
    const configSize = bytes(JSON.stringify({ architecture: "amd64", os: "linux", seed: "b" })).byteLength;
    const layerSize = bytes("layer-bytes-b").byteLength;
    expect(two.action === "push" && two.references).toEqual([{ digest: second.config, size: configSize }, { digest: second.layer, size: layerSize }]);
    expect(two.action === "push" && two.referencedBytes).toBe(configSize + layerSize);
    expect(two.action === "push" && two.manifestSize).toBe(bytes(second.manifest).byteLength);
    // Every blob upload was asked about too, with its size.
    expect(seen.filter((w) => w.action === "blob").map((w) => w.action === "blob" && w.size)).toEqual([configSize, bytes("layer-bytes-a").byteLength, configSize, layerSize]);
  });

  it("a refusal is a 403 DENIED with the policy's message and detail, and nothing is stored", async () => {
    const { registry } = setup([{ check: (w) => (w.action === "push" ? { message: "no pushes on Fridays", detail: { day: "friday" } } : undefined) }]);
    await expect(pushImage(registry, "app", "v1")).rejects.toThrow(/manifest PUT 403/);
    expect(await tagOf(registry, "app", "v1")).toBeNull();
    const config = await pushBlob(registry, "app", "{}");
    const error = await denied(await putManifest(registry, "app", "v2", imageManifest(config, 2, [])));
    expect(error).toEqual({ code: "DENIED", message: "no pushes on Fridays", detail: { day: "friday" } });
  });
});

describe("immutableTags", () => {
  it("refuses moving an existing matching tag, allows the same digest again and other tags", async () => {
    const { registry } = setup([immutableTags(["v*"])]);
    const first = await pushImage(registry, "app", "v1", "a");
    const again = await putManifest(registry, "app", "v1", first.manifest);
    expect(again.status).toBe(201);
    const other = await pushImage(registry, "app", "latest", "b");
    const moved = await pushImage(registry, "app", "latest", "c");
    expect(await tagOf(registry, "app", "latest")).toBe(moved.digest);
    const error = await denied(await putManifest(registry, "app", "v1", other.manifest));
    expect(error.message).toBe(`tag v1 of app is immutable: it points at ${first.digest} and cannot be moved to ${other.digest}`);
    expect(error.detail).toEqual({ policy: "immutableTags", repository: "app", tag: "v1" });
    expect(await tagOf(registry, "app", "v1")).toBe(first.digest);
  });

  it("refuses deleting a matching tag and a manifest a matching tag points at; others go", async () => {
    const { registry } = setup([immutableTags({ "prod/*": ["*"] })]);
    const prod = await pushImage(registry, "prod/api", "stable", "a");
    const dev = await pushImage(registry, "dev/api", "stable", "a");
    const tagDelete = await denied(await registry(req("DELETE", "/v2/prod/api/manifests/stable")));
    expect(tagDelete.message).toBe("tag stable of prod/api is immutable and cannot be deleted");
    const byDigest = await denied(await registry(req("DELETE", `/v2/prod/api/manifests/${prod.digest}`)));
    expect(byDigest.message).toBe(`manifest ${prod.digest} cannot be deleted: it holds the immutable tag stable`);
    expect(await tagOf(registry, "prod/api", "stable")).toBe(prod.digest);
    expect((await registry(req("DELETE", "/v2/dev/api/manifests/stable"))).status).toBe(202);
    expect((await registry(req("DELETE", `/v2/dev/api/manifests/${dev.digest}`))).status).toBe(202);
  });

  it("two racing first pushes of one immutable tag: exactly one wins, the other is refused", async () => {
    const { registry } = setup([immutableTags(["release"])]);
    const manifests = await Promise.all(["a", "b", "c", "d"].map(async (seed) => {
      const config = await pushBlob(registry, "app", `{"seed":"${seed}"}`);
      return imageManifest(config, bytes(`{"seed":"${seed}"}`).byteLength, []);
    }));
    const results = await Promise.all(manifests.map((m) => putManifest(registry, "app", "release", m)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 403, 403, 403]);
    const winner = manifests[results.findIndex((r) => r.status === 201)]!;
    expect(await tagOf(registry, "app", "release")).toBe(sha256(winner));
  });

  it("refuses deleting what an immutable tag's image holds: a layer, a config, a child manifest of an index, recursively", async () => {
    const { registry } = setup([immutableTags(["v*"])]);
    const amd = await pushImage(registry, "app", "amd", "amd");
    const arm = await pushImage(registry, "app", "arm", "arm");
    const INDEX = "application/vnd.oci.image.index.v1+json";
    const child = (image: { manifest: string; digest: string }) => ({ mediaType: OCI, digest: image.digest, size: bytes(image.manifest).byteLength });
    const inner = JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests: [child(arm)] });
    expect((await registry(req("PUT", `/v2/app/manifests/${sha256(inner)}`, { body: inner, headers: { "content-type": INDEX } }))).status).toBe(201);
    // v1 → index → [amd, index → [arm]]
    const index = JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests: [child(amd), { mediaType: INDEX, digest: sha256(inner), size: bytes(inner).byteLength }] });
    expect((await registry(req("PUT", "/v2/app/manifests/v1", { body: index, headers: { "content-type": INDEX } }))).status).toBe(201);
    // The mutable tags go: the index alone holds the children now.
    for (const tag of ["amd", "arm"]) expect((await registry(req("DELETE", `/v2/app/manifests/${tag}`))).status).toBe(202);

    const layer = await denied(await registry(req("DELETE", `/v2/app/blobs/${arm.layer}`)));
    expect(layer.message).toBe(`blob ${arm.layer} cannot be deleted: the immutable tag v1 of app (${sha256(index)}) references it`);
    expect(layer.detail).toEqual({ policy: "immutableTags", repository: "app", tag: "v1" });
    expect((await denied(await registry(req("DELETE", `/v2/app/blobs/${amd.config}`)))).message).toMatch(/^blob sha256:\w+ cannot be deleted: the immutable tag v1 of app/);
    for (const digest of [amd.digest, arm.digest, sha256(inner)]) {
      const error = await denied(await registry(req("DELETE", `/v2/app/manifests/${digest}`)));
      expect(error.message).toBe(`manifest ${digest} cannot be deleted: the immutable tag v1 of app (${sha256(index)}) references it`);
    }
    // Everything still pulls.
    for (const digest of [sha256(index), sha256(inner), amd.digest, arm.digest]) expect((await registry(req("GET", `/v2/app/manifests/${digest}`))).status).toBe(200);
    for (const blob of [amd.config, amd.layer, arm.config, arm.layer]) expect((await registry(req("GET", `/v2/app/blobs/${blob}`))).status).toBe(200);

    // What no immutable tag holds can go: a blob of another image, and the same layer in another repository.
    const other = await pushImage(registry, "app", "latest", "other");
    expect((await registry(req("DELETE", `/v2/app/blobs/${other.layer}`))).status).toBe(202);
    await pushImage(registry, "copy", "latest", "arm");
    expect((await registry(req("DELETE", `/v2/copy/blobs/${arm.layer}`))).status).toBe(202);
    expect((await registry(req("DELETE", "/v2/app/blobs/sha256:" + "0".repeat(64)))).status).toBe(404);
  });

  it("protects() answers for the globs, by repository", () => {
    const policy = immutableTags({ "prod/*": ["v?.*"], "*": ["release-*"] });
    expect(policy.protects("prod/api", "v1.2")).toBe(true);
    expect(policy.protects("prod/api", "v10.2")).toBe(false);
    expect(policy.protects("dev/api", "v1.2")).toBe(false);
    expect(policy.protects("dev/api", "release-7")).toBe(true);
  });

  it("deleteRepository refuses a repository holding an immutable tag, unless forced", async () => {
    const policy = immutableTags(["v*"]);
    const { storage, registry } = setup([policy]);
    await pushImage(registry, "app", "v1");
    await expect(deleteRepository(storage, "app", { policies: [policy] })).rejects.toMatchObject({ code: "DENIED", status: 403 });
    expect(await catalog(registry)).toEqual(["app"]);
    const report = await deleteRepository(storage, "app", { policies: [policy], force: true });
    expect(report).toMatchObject({ found: true, tags: 1, manifests: 1, links: 2 });
    expect(await catalog(registry)).toEqual([]);
  });
});

describe("quota", () => {
  /** `size` bytes, different for each seed (a seed's last character picks the byte). */
  const layer = (seed: string, size: number) => new Uint8Array(size).fill(seed.charCodeAt(seed.length - 1));

  /** Push one config and a layer of each size; the manifest PUT's response. */
  async function pushSized(registry: Handler, name: string, tag: string, seed: string, ...sizes: number[]): Promise<Response> {
    const configText = `{"seed":"${seed}"}`;
    const config = await pushBlob(registry, name, configText);
    const layers = [];
    for (const [i, size] of sizes.entries()) layers.push({ digest: await pushBlob(registry, name, layer(`${seed}${i}`, size)), size });
    return putManifest(registry, name, tag, imageManifest(config, bytes(configText).byteLength, layers));
  }

  it("counts unique blob bytes per namespace and refuses the manifest that would pass the limit, with usage and limit", async () => {
    const limit = 10_000;
    const q = quota({ "team/*": limit });
    const { storage, registry } = setup([q]);
    expect((await pushSized(registry, "team/a", "v1", "a", 4000)).status).toBe(201);
    // The same layer in another repository of the namespace counts once.
    const configText = `{"seed":"a2"}`;
    const config = await pushBlob(registry, "team/b", configText);
    const shared = await pushBlob(registry, "team/b", layer("a0", 4000));
    const reuse = await putManifest(registry, "team/b", "v1", imageManifest(config, bytes(configText).byteLength, [{ digest: shared, size: 4000 }]));
    expect(reuse.status).toBe(201);
    const [usage] = await q.usage(storage);
    const manifestSize = async (name: string) => (await (await registry(req("GET", `/v2/${name}/manifests/v1`))).arrayBuffer()).byteLength;
    // Two manifests, two configs, one shared layer.
    const expected = (await manifestSize("team/a")) + (await manifestSize("team/b")) + bytes(`{"seed":"a"}`).byteLength + bytes(configText).byteLength + 4000;
    expect(usage).toEqual({ namespace: "team/*", limit, used: expected, blobs: 5, repositories: 2 });
    // Each layer fits alone, not both: uploaded blobs count before a manifest references them, so the second is refused.
    const configC = `{"seed":"c"}`;
    await pushBlob(registry, "team/c", configC);
    await pushBlob(registry, "team/c", layer("c0", 2950));
    await expect(pushBlob(registry, "team/c", layer("c1", 2950))).rejects.toThrow(/PUT 403 .*quota exceeded for team\/\*: this blob adds 2\.9 KiB to [\d.]+ KiB used of 9\.8 KiB/);
    const loose = { used: usage!.used + bytes(configC).byteLength + 2950, blobs: 7, repositories: 2 };
    expect((await q.usage(storage))[0]).toMatchObject(loose);
    // A manifest adding only itself over what is left is refused, with usage and limit.
    const fill = limit - loose.used - 100;
    await pushBlob(registry, "team/c", layer("c2", fill));
    const manifest = imageManifest(sha256(configC), bytes(configC).byteLength, [{ digest: sha256(layer("c0", 2950)), size: 2950 }, { digest: sha256(layer("c2", fill)), size: fill }]);
    const error = await denied(await putManifest(registry, "team/c", "v1", manifest));
    expect(error.message).toMatch(/^quota exceeded for team\/\*: this manifest adds [\d.]+ B to 9\.7 KiB used of 9\.8 KiB$/);
    expect(error.detail).toMatchObject({ policy: "quota", namespace: "team/*", repository: "team/c", used: limit - 100, adding: bytes(manifest).byteLength, limit });
    // Other namespaces are not limited.
    expect((await pushSized(registry, "other/x", "v1", "x", 20_000)).status).toBe(201);
  });

  it("refuses a blob upload that alone would pass the limit, and cancels its upload", async () => {
    const { registry } = setup([quota({ "*": 1000 })]);
    await expect(pushBlob(registry, "app", layer("z", 2000))).rejects.toThrow(/PUT 403.*quota exceeded for \*: this blob adds 2\.0 KiB to 0 B used of 1000 B/);
    expect((await registry(req("HEAD", `/v2/app/blobs/${sha256(layer("z", 2000))}`))).status).toBe(404);
  });

  it("a re-tag or a push adding nothing passes even over the limit; deletes lower the usage", async () => {
    let limit = 100_000;
    const q = quota({ "*": 100_000 });
    const dynamic: WritePolicy = { check: (w, s) => (limit === 100_000 ? q.check(w, s) : quota({ "*": limit }).check(w, s)) };
    const { storage, registry } = setup([dynamic]);
    expect((await pushSized(registry, "app", "v1", "a", 5000)).status).toBe(201);
    const v1 = await tagOf(registry, "app", "v1");
    const manifest = await (await registry(req("GET", "/v2/app/manifests/v1"))).text();
    limit = 10;
    expect((await putManifest(registry, "app", "again", manifest)).status).toBe(201);
    expect((await q.usage(storage))[0]!.used).toBeGreaterThan(5000);
    expect((await registry(req("DELETE", `/v2/app/manifests/${v1}`))).status).toBe(202);
    // Its blobs stay linked, and count, until garbage collection takes them.
    expect(await q.usage(storage)).toEqual([{ namespace: "*", limit: 100_000, used: bytes(`{"seed":"a"}`).byteLength + 5000, blobs: 2, repositories: 0 }]);
    await collectGarbage(storage, { gracePeriodSeconds: 0 });
    expect(await q.usage(storage)).toEqual([{ namespace: "*", limit: 100_000, used: 0, blobs: 0, repositories: 0 }]);
  });

  it("uploaded blobs no manifest references count: 40 parallel 60 KB uploads into a 63 KB remainder let one in", async () => {
    const q = quota({ "team/*": 63 * 1024 });
    const { storage, registry } = setup([q]);
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => pushBlob(registry, `team/r${i % 4}`, layer(`p${String.fromCharCode(65 + i)}`, 60_000))));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(String(r.reason)).toMatch(/PUT 403 .*quota exceeded for team\/\*: this blob adds 58\.6 KiB to 58\.6 KiB used of 63\.0 KiB/);
    expect(await q.usage(storage)).toEqual([{ namespace: "team/*", limit: 63 * 1024, used: 60_000, blobs: 1, repositories: 0 }]);
    // A fresh policy (another process, a restart) counts the same from storage.
    expect(await quota({ "team/*": 63 * 1024 }).usage(storage)).toEqual(await q.usage(storage));
  });

  it("a refused push leaves no repository without a manifest in the catalog", async () => {
    const configText = `{"seed":"x"}`;
    const q = quota({ "*": bytes(configText).byteLength + 1000 });
    const { registry } = setup([q]);
    // Refused at its layer: the config went in first.
    await pushBlob(registry, "big", configText);
    await expect(pushBlob(registry, "big", layer("b", 2000))).rejects.toThrow(/PUT 403/);
    expect(await catalog(registry)).toEqual([]);
    // Refused at its manifest: both blobs fit, the manifest does not.
    await pushBlob(registry, "tight", layer("t", 990 - bytes(configText).byteLength));
    expect(await catalog(registry)).toEqual(["tight"]);
    const manifest = imageManifest(sha256(configText), bytes(configText).byteLength, [{ digest: sha256(layer("t", 990 - bytes(configText).byteLength)), size: 990 - bytes(configText).byteLength }]);
    await pushBlob(registry, "tight", configText);
    await denied(await putManifest(registry, "tight", "v1", manifest));
    expect(await catalog(registry)).toEqual([]);
  });

  it("usage(storage, repository) reports only the namespaces the repository is in", async () => {
    const q = quota({ "a/*": 1e9, "b/*": 1e9, "*": 1e9 });
    const { storage, registry } = setup([q]);
    await pushSized(registry, "a/x", "v1", "a", 10);
    expect((await q.usage(storage, "a/x")).map((u) => u.namespace)).toEqual(["a/*", "*"]);
  });
});

describe("deleteRepository and the catalog", () => {
  it("removes tags, manifests, links and uploads of one repository only (not a nested one), and it leaves the catalog", async () => {
    const { storage, registry } = setup([]);
    const image = await pushImage(registry, "app", "v1");
    await pushImage(registry, "app/nested", "v1");
    const upload = await registry(req("POST", "/v2/app/blobs/uploads/"));
    expect(upload.status).toBe(202);
    const report = await deleteRepository(storage, "app");
    expect(report).toEqual({ repository: "app", found: true, tags: 1, manifests: 1, links: 2, uploads: 1 });
    expect(await catalog(registry)).toEqual(["app/nested"]);
    expect((await registry(req("GET", "/v2/app/manifests/v1"))).status).toBe(404);
    expect((await registry(req("GET", "/v2/app/tags/list"))).status).toBe(404);
    expect((await registry(req("HEAD", `/v2/app/blobs/${image.layer}`))).status).toBe(404);
    expect((await registry(req("GET", "/v2/app/nested/manifests/v1"))).status).toBe(200);
    // The bytes stay for garbage collection.
    expect((await storage.list("blobs")).keys.length).toBeGreaterThan(0);
    expect(await deleteRepository(storage, "app")).toEqual({ repository: "app", found: false, tags: 0, manifests: 0, links: 0, uploads: 0 });
    await expect(deleteRepository(storage, "Bad Name")).rejects.toMatchObject({ code: "NAME_INVALID" });
  });

  it("a repository whose last manifest is deleted leaves the catalog, and comes back with the next push", async () => {
    const { registry } = setup([]);
    const one = await pushImage(registry, "app", "v1", "a");
    const two = await pushImage(registry, "app", "v2", "b");
    expect((await registry(req("DELETE", `/v2/app/manifests/${one.digest}`))).status).toBe(202);
    expect(await catalog(registry)).toEqual(["app"]);
    expect((await registry(req("DELETE", `/v2/app/manifests/${two.digest}`))).status).toBe(202);
    expect(await catalog(registry)).toEqual([]);
    await pushImage(registry, "app", "v3", "c");
    expect(await catalog(registry)).toEqual(["app"]);
  });
});
