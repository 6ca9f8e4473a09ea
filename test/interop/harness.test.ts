/**
 * Validates the interop harness itself against the reference registry
 * (Debian's docker-registry, CNCF Distribution 2.8) before any of it is
 * pointed at registry-kit: the hand-built images are valid for a real
 * registry and a real client, byte-for-byte comparison works, the pull-back
 * readers find the same digests, and the access-log based mount check sees
 * skopeo's cross-repository mount.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDistribution, type Distribution } from "./helpers/distribution.js";
import { buildTestImage, readDirLayout, readOciLayout, sha256, tar } from "./helpers/image.js";
import { describeRun, requireTool, run, tempDir } from "./helpers/process.js";
import { containersSandbox } from "./helpers/containers.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

describe("harness helpers", () => {
  it("requireTool fails (never skips) with the install command when a program is missing", () => {
    expect(() => requireTool("registry-kit-no-such-tool")).toThrow(/install it: apt-get install -y registry-kit-no-such-tool/);
    expect(() => requireTool("openstack-missing")).toThrow(/not on PATH/);
    expect(requireTool("skopeo")).toMatch(/\/skopeo$/);
  });

  it("run() kills a command at its hard timeout", async () => {
    const r = await run("sleep", ["30"], { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.durationMs).toBeLessThan(5_000);
  });

  it("the hand-written tar is read by the system tar", async () => {
    const dir = tempDir("tar");
    try {
      const archive = tar([{ path: "a" }, { path: "a/b.txt", data: "hello\n" }, { path: "a/" + "x".repeat(120) + "/c", data: "deep" }]);
      const r = await run("tar", ["-tvf", "-"], { input: archive });
      expect(r.code, describeRun(r)).toBe(0);
      expect(r.stdout).toContain("a/b.txt");
      expect(r.stdout).toContain("x".repeat(120) + "/c");
    } finally {
      dir.remove();
    }
  });
});

describe("harness against CNCF Distribution 2.8 (docker-registry), no auth", () => {
  let dist: Distribution;
  let skopeo: SkopeoSandbox;
  const work = tempDir("harness");
  const ns = `harness-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    dist = await startDistribution();
  });
  afterAll(async () => {
    await dist?.stop();
    skopeo?.remove();
    work.remove();
  });

  it("skopeo pushes a hand-built OCI image, inspect --raw gives its exact bytes, the pull-back has the same digests, and a copy to another repo mounts", async () => {
    const img = buildTestImage(join(work.path, "oci-src"), { sizes: [2048, 300_000, 10] });
    const dest = `docker://${dist.host}/${ns}/oci:v1`;
    const push = await skopeo.copy(img.ref, dest);
    expect(push.code, describeRun(push)).toBe(0);

    const served = await skopeo.inspectRaw(dest);
    expect(served.equals(img.manifestBytes), `served manifest differs:\n${served}\n---\n${img.manifestBytes}`).toBe(true);

    // The reference registry serves it under the digest of those bytes.
    const res = await fetch(`${dist.url}/v2/${ns}/oci/manifests/v1`, { headers: { Accept: img.mediaType } });
    expect(res.status).toBe(200);
    expect(res.headers.get("docker-content-digest")).toBe(img.manifestDigest);
    expect(res.headers.get("content-type")).toBe(img.mediaType);
    expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(img.manifestDigest);

    const back = join(work.path, "oci-back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.configDigest).toBe(img.config.digest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);

    // Cross-repository copy: skopeo mounts the layers instead of uploading them.
    const copy = await skopeo.copy(dest, `docker://${dist.host}/${ns}/copy:v1`);
    expect(copy.code, describeRun(copy)).toBe(0);
    const mounts = dist.requests().filter((r) => r.method === "POST" && r.path.includes(`/v2/${ns}/copy/blobs/uploads/`) && r.path.includes("mount="));
    expect(mounts.map((m) => m.status)).toContain(201);
    const mounted = mounts.filter((m) => m.status === 201).map((m) => decodeURIComponent(/mount=([^&]+)/.exec(m.path)![1]!));
    for (const l of img.layers) expect(mounted).toContain(l.digest);
    expect((await skopeo.inspectRaw(`docker://${dist.host}/${ns}/copy:v1`)).equals(img.manifestBytes)).toBe(true);
  });

  it("skopeo pushes a hand-built Docker schema 2 image byte for byte and pulls it back", async () => {
    const img = buildTestImage(join(work.path, "v2s2-src"), { format: "docker", layers: 2 });
    const dest = `docker://${dist.host}/${ns}/v2s2:v1`;
    const push = await skopeo.copy(img.ref, dest);
    expect(push.code, describeRun(push)).toBe(0);
    const served = await skopeo.inspectRaw(dest);
    expect(served.equals(img.manifestBytes), `served manifest differs:\n${served}`).toBe(true);
    expect(JSON.parse(served.toString()).mediaType).toBe("application/vnd.docker.distribution.manifest.v2+json");

    const back = join(work.path, "v2s2-back");
    const pull = await skopeo.copy(dest, `dir:${back}`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readDirLayout(back);
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.configDigest).toBe(img.config.digest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
  });

  it("skopeo --format v2s2 converts the OCI image to Docker schema 2 on push", async () => {
    const img = buildTestImage(join(work.path, "conv-src"), { layers: 1 });
    const dest = `docker://${dist.host}/${ns}/converted:v1`;
    const push = await skopeo.copy(img.ref, dest, { format: "v2s2" });
    expect(push.code, describeRun(push)).toBe(0);
    const served = JSON.parse((await skopeo.inspectRaw(dest)).toString()) as {
      mediaType: string;
      config: { digest: string; mediaType: string };
      layers: Array<{ digest: string; mediaType: string }>;
    };
    expect(served.mediaType).toBe("application/vnd.docker.distribution.manifest.v2+json");
    expect(served.config.mediaType).toBe("application/vnd.docker.container.image.v1+json");
    expect(served.layers.map((l) => l.digest)).toEqual(img.layers.map((l) => l.digest));
    expect(served.layers[0]!.mediaType).toBe("application/vnd.docker.image.rootfs.diff.tar.gzip");
  });

  it("buildah builds and pushes, podman (another isolated store) pulls the same digest and pushes again (vfs, as root, no container runtime)", async () => {
    const builder = containersSandbox("buildah");
    const puller = containersSandbox("podman");
    try {
      const local = "localhost/registry-kit/interop:v1";
      const imageId = await builder.buildScratchImage(local, { "/hello.txt": `hello ${ns}\n` });
      const ref = `${dist.host}/${ns}/podman:v1`;
      const digestFile = join(builder.dir, "digest");
      const push = await builder.buildah(["push", "--tls-verify=false", "--digestfile", digestFile, local, `docker://${ref}`]);
      expect(push.code, describeRun(push)).toBe(0);
      const pushedDigest = readFileSync(digestFile, "utf8").trim();
      expect(pushedDigest).toMatch(/^sha256:[0-9a-f]{64}$/);

      const pull = await puller.podman(["pull", "--tls-verify=false", ref]);
      expect(pull.code, describeRun(pull)).toBe(0);
      expect(pull.stdout.trim()).toBe(imageId);
      const inspect = await puller.podman(["image", "inspect", ref]);
      expect(inspect.code, describeRun(inspect)).toBe(0);
      const [info] = JSON.parse(inspect.stdout) as Array<{ Id: string; Digest: string; RepoDigests: string[] }>;
      expect(info!.Id).toBe(imageId);
      expect(info!.Digest).toBe(pushedDigest);
      expect(info!.RepoDigests).toContain(`${dist.host}/${ns}/podman@${pushedDigest}`);

      const again = await puller.podman(["push", "--tls-verify=false", ref, `docker://${dist.host}/${ns}/podman-again:v1`]);
      expect(again.code, describeRun(again)).toBe(0);
      const manifest = JSON.parse((await skopeo.inspectRaw(`docker://${dist.host}/${ns}/podman-again:v1`)).toString()) as { config: { digest: string } };
      expect(manifest.config.digest).toBe(`sha256:${imageId}`);
    } finally {
      builder.remove();
      puller.remove();
    }
  });
});
