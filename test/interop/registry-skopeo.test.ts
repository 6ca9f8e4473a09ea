/**
 * Issue 2 acceptance: skopeo 1.9.3 against registry-kit's registry, served by
 * the Node adapter on 127.0.0.1 with the fs storage driver, no auth.
 *
 * Proves with a real client nobody here wrote: push (POST + PATCH + PUT with
 * the plain-http fallback after skopeo's https attempt), manifests stored and
 * served byte for byte, pull back with identical digests, a cross-repository
 * copy that mounts the layers (POST …?mount= answered 201), and a Docker
 * schema 2 push.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, buildTestIndex, readDirLayout, readOciLayout, sha256 } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

describe("skopeo against registry-kit (Node adapter, fs storage, no auth)", () => {
  let reg: RegistryKit;
  let skopeo: SkopeoSandbox;
  const work = tempDir("reg-skopeo");
  const ns = `skopeo-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    reg = await startRegistryKit();
  });
  afterAll(async () => {
    await reg?.close();
    skopeo?.remove();
    work.remove();
  });

  it("pushes a hand-built OCI image, serves its manifest byte for byte, pulls it back with identical digests, and mounts it into a second repository", async () => {
    const img = buildTestImage(join(work.path, "oci-src"), { sizes: [4096, 1_500_000, 1] });
    const dest = `docker://${reg.host}/${ns}/app:v1`;

    const push = await skopeo.copy(img.ref, dest);
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    // skopeo uploads each blob with POST + PATCH + PUT and then PUTs the manifest.
    const pushed = reg.recorder.requests;
    expect(pushed.filter((r) => r.method === "PUT" && r.path.includes("/blobs/uploads/") && r.status === 201)).toHaveLength(img.blobDigests.length);
    expect(pushed.some((r) => r.method === "PUT" && r.path === `/v2/${ns}/app/manifests/v1` && r.status === 201), reg.recorder.dump()).toBe(true);
    expect(pushed.filter((r) => r.status >= 500), reg.recorder.dump()).toEqual([]);

    const served = await skopeo.inspectRaw(dest);
    expect(served.equals(img.manifestBytes), `served manifest differs:\n${served}\n--- pushed ---\n${img.manifestBytes}`).toBe(true);

    // The same through plain fetch: content type, digest header, and blobs by digest.
    const res = await fetch(`${reg.url}/v2/${ns}/app/manifests/v1`, { headers: { Accept: img.mediaType } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(img.mediaType);
    expect(res.headers.get("docker-content-digest")).toBe(img.manifestDigest);
    expect(Buffer.from(await res.arrayBuffer()).equals(img.manifestBytes)).toBe(true);
    for (const l of img.layers) {
      const b = await fetch(`${reg.url}/v2/${ns}/app/blobs/${l.digest}`);
      expect(b.status).toBe(200);
      expect(sha256(new Uint8Array(await b.arrayBuffer()))).toBe(l.digest);
    }

    const back = join(work.path, "oci-back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestBytes.equals(img.manifestBytes)).toBe(true);
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.configDigest).toBe(img.config.digest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest, `content of blob ${name}`).toBe(name);

    // Cross-repository copy within the registry: the layers are mounted, not uploaded.
    reg.recorder.clear();
    const copyRef = `docker://${reg.host}/${ns}/copy:v1`;
    const copy = await skopeo.copy(dest, copyRef);
    expect(copy.code, describeRun(copy)).toBe(0);
    const mounts = reg.recorder.requests.filter(
      (r) => r.method === "POST" && r.path.startsWith(`/v2/${ns}/copy/blobs/uploads/`) && r.path.includes("mount="),
    );
    const mounted = mounts.filter((m) => m.status === 201).map((m) => new URLSearchParams(m.path.split("?")[1]).get("mount"));
    for (const l of img.layers) expect(mounted, `mount of ${l.digest}\n${reg.recorder.dump()}`).toContain(l.digest);
    for (const m of mounts) expect(new URLSearchParams(m.path.split("?")[1]).get("from")).toBe(`${ns}/app`);
    // Nothing was re-uploaded for the layers.
    const layerUploads = reg.recorder.requests.filter(
      (r) => r.method === "PUT" && r.path.startsWith(`/v2/${ns}/copy/blobs/uploads/`) && img.layers.some((l) => r.path.includes(encodeURIComponent(l.digest))),
    );
    expect(layerUploads, reg.recorder.dump()).toEqual([]);
    expect((await skopeo.inspectRaw(copyRef)).equals(img.manifestBytes)).toBe(true);
  });

  it("pushes a hand-built Docker schema 2 image byte for byte and pulls it back", async () => {
    const img = buildTestImage(join(work.path, "v2s2-src"), { format: "docker", sizes: [2048, 100_000] });
    const dest = `docker://${reg.host}/${ns}/docker:v1`;
    const push = await skopeo.copy(img.ref, dest);
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);

    const served = await skopeo.inspectRaw(dest);
    expect(served.equals(img.manifestBytes), `served manifest differs:\n${served}`).toBe(true);
    const res = await fetch(`${reg.url}/v2/${ns}/docker/manifests/v1`, {
      headers: { Accept: "application/vnd.docker.distribution.manifest.v2+json" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.docker.distribution.manifest.v2+json");
    expect(res.headers.get("docker-content-digest")).toBe(img.manifestDigest);
    await res.arrayBuffer();

    const back = join(work.path, "v2s2-back");
    const pull = await skopeo.copy(dest, `dir:${back}`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readDirLayout(back);
    expect(got.manifestBytes.equals(img.manifestBytes)).toBe(true);
    expect(got.configDigest).toBe(img.config.digest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
  });

  it("accepts skopeo's own OCI → Docker schema 2 conversion (--format v2s2) and serves it by digest", async () => {
    const img = buildTestImage(join(work.path, "conv-src"), { layers: 1 });
    const digestFile = join(work.path, "conv.digest");
    const dest = `docker://${reg.host}/${ns}/converted:v1`;
    const push = await skopeo.copy(img.ref, dest, { format: "v2s2", extraArgs: ["--digestfile", digestFile] });
    expect(push.code, describeRun(push)).toBe(0);
    const served = await skopeo.inspectRaw(dest);
    const manifest = JSON.parse(served.toString()) as { mediaType: string; layers: Array<{ digest: string }> };
    expect(manifest.mediaType).toBe("application/vnd.docker.distribution.manifest.v2+json");
    expect(manifest.layers.map((l) => l.digest)).toEqual(img.layers.map((l) => l.digest));
    const digest = readFileSync(digestFile, "utf8").trim();
    expect(sha256(served)).toBe(digest);
    // and by digest
    const byDigest = await skopeo.inspectRaw(`docker://${reg.host}/${ns}/converted@${digest}`);
    expect(byDigest.equals(served)).toBe(true);
  });

  it("skopeo copy --all pushes a multi-platform OCI index; the index and each platform manifest are served byte for byte, and one platform pulls back", async () => {
    const index = buildTestIndex(join(work.path, "index-src"), { archs: ["amd64", "arm64"] });
    const dest = `docker://${reg.host}/${ns}/multi:v1`;
    const push = await skopeo.copy(index.ref, dest, { extraArgs: ["--all"] });
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);

    expect((await skopeo.inspectRaw(dest)).equals(index.indexBytes)).toBe(true);
    const res = await fetch(`${reg.url}/v2/${ns}/multi/manifests/v1`, { headers: { Accept: "application/vnd.oci.image.index.v1+json" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.oci.image.index.v1+json");
    expect(res.headers.get("docker-content-digest")).toBe(index.indexDigest);
    await res.arrayBuffer();
    for (const { image } of index.images) {
      const child = await skopeo.inspectRaw(`docker://${reg.host}/${ns}/multi@${image.manifestDigest}`);
      expect(child.equals(image.manifestBytes)).toBe(true);
    }

    const arm = index.images.find((i) => i.arch === "arm64")!.image;
    const back = join(work.path, "index-arm64");
    const pull = await skopeo.raw(["--override-arch", "arm64", "--override-os", "linux", "copy", "--src-tls-verify=false", dest, `oci:${back}:v1`]);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(arm.manifestDigest);
    expect(got.configDigest).toBe(arm.config.digest);
    expect(got.layerDigests).toEqual(arm.layers.map((l) => l.digest));
  });

  it("a 64 MiB layer round-trips through skopeo (streamed both ways)", async () => {
    const big = buildTestImage(join(work.path, "big-src"), { sizes: [64 * 1024 * 1024] });
    const dest = `docker://${reg.host}/${ns}/big:v1`;
    const t0 = Date.now();
    const push = await skopeo.copy(big.ref, dest);
    const pushMs = Date.now() - t0;
    expect(push.code, describeRun(push)).toBe(0);
    const back = join(work.path, "big-back");
    const t1 = Date.now();
    const pull = await skopeo.copy(dest, `oci:${back}:v1`);
    const pullMs = Date.now() - t1;
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.layerDigests).toEqual([big.layers[0]!.digest]);
    expect(got.blobFileDigests.get(big.layers[0]!.digest)).toBe(big.layers[0]!.digest);
    console.log(`64 MiB layer (${big.layers[0]!.size} bytes gzipped): skopeo push ${pushMs} ms, pull ${pullMs} ms`);
  });

  it("skopeo list-tags lists every tag, and skopeo delete removes a manifest", async () => {
    const tagged = await skopeo.copy(`docker://${reg.host}/${ns}/app:v1`, `docker://${reg.host}/${ns}/app:v2`);
    expect(tagged.code, describeRun(tagged)).toBe(0);
    const list = await skopeo.raw(["list-tags", "--tls-verify=false", `docker://${reg.host}/${ns}/app`]);
    expect(list.code, describeRun(list)).toBe(0);
    const tags = (JSON.parse(list.stdout) as { Repository: string; Tags: string[] }).Tags;
    expect([...tags].sort()).toEqual(["v1", "v2"]);

    const doomed = buildTestImage(join(work.path, "doomed-src"), { layers: 1 });
    const ref = `docker://${reg.host}/${ns}/doomed:v1`;
    expect((await skopeo.copy(doomed.ref, ref)).code).toBe(0);
    const del = await skopeo.raw(["delete", "--tls-verify=false", ref]);
    expect(del.code, `${describeRun(del)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    expect(reg.recorder.requests.some((r) => r.method === "DELETE" && r.path === `/v2/${ns}/doomed/manifests/${doomed.manifestDigest}` && r.status === 202)).toBe(true);
    const gone = await skopeo.inspect(`docker://${reg.host}/${ns}/doomed@${doomed.manifestDigest}`);
    expect(gone.code, describeRun(gone)).not.toBe(0);
    expect(gone.stderr).toMatch(/manifest unknown/i);
  });

  it("deep, unusual but valid names and 24 layers pushed in parallel round-trip", async () => {
    const img = buildTestImage(join(work.path, "many-src"), { sizes: Array.from({ length: 24 }, (_, i) => 500 + i * 997) });
    const repo = `${ns}/a.b/c_d/e__f/g-h--i/j`;
    const tag = "Tag_1.0-rc.1";
    const dest = `docker://${reg.host}/${repo}:${tag}`;
    const push = await skopeo.copy(img.ref, dest);
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    expect((await skopeo.inspectRaw(dest)).equals(img.manifestBytes)).toBe(true);
    const back = join(work.path, "many-back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [digest, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(digest);
    const tags = await skopeo.raw(["list-tags", "--tls-verify=false", `docker://${reg.host}/${repo}`]);
    expect(tags.code, describeRun(tags)).toBe(0);
    expect((JSON.parse(tags.stdout) as { Tags: string[] }).Tags).toEqual([tag]);
  });

  it("the whole skopeo session produced no 5xx", () => {
    expect(reg.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), reg.recorder.dump()).toEqual([]);
  });
});
