/**
 * buildah 1.28 and podman 4.3 against registry-kit's registry (Node adapter,
 * fs storage, no auth), each with its own vfs image store, as root, without a
 * container runtime.
 *
 * Proves: an image built by buildah (from scratch + copy + commit) is pushed
 * and its manifest digest (buildah --digestfile) is what registry-kit serves;
 * podman in a separate store pulls it back with the same image id and the
 * same manifest digest (podman image inspect); podman push to another
 * repository works and that copy pulls back to the same image id.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containersSandbox, type ContainersSandbox } from "./helpers/containers.js";
import { sha256 } from "./helpers/image.js";
import { describeRun } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";

interface PodmanImage {
  Id: string;
  Digest: string;
  RepoDigests: string[];
  RootFS: { Layers: string[] };
  Labels: Record<string, string> | null;
}

describe("buildah and podman against registry-kit (Node adapter, fs storage, no auth)", () => {
  let reg: RegistryKit;
  let builder: ContainersSandbox;
  let puller: ContainersSandbox;
  const ns = `podman-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    builder = containersSandbox("buildah");
    puller = containersSandbox("podman");
    reg = await startRegistryKit();
  });
  afterAll(async () => {
    await reg?.close();
    builder?.remove();
    puller?.remove();
  });

  it("buildah pushes, podman pulls the same digest, podman pushes again", async () => {
    const local = `localhost/${ns}/built:v1`;
    const content = `hello from ${ns}\n`;
    const imageId = await builder.buildScratchImage(local, { "/hello.txt": content, "/etc/motd": "registry-kit\n" });
    expect(imageId).toMatch(/^[0-9a-f]{64}$/);

    const ref = `${reg.host}/${ns}/app:v1`;
    const digestFile = join(builder.dir, "pushed.digest");
    const push = await builder.buildah(["push", "--tls-verify=false", "--digestfile", digestFile, local, `docker://${ref}`]);
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    const pushedDigest = readFileSync(digestFile, "utf8").trim();

    // registry-kit serves the manifest under exactly that digest.
    const res = await fetch(`${reg.url}/v2/${ns}/app/manifests/v1`, {
      headers: { Accept: "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json" },
    });
    expect(res.status).toBe(200);
    const manifestBytes = new Uint8Array(await res.arrayBuffer());
    expect(sha256(manifestBytes)).toBe(pushedDigest);
    expect(res.headers.get("docker-content-digest")).toBe(pushedDigest);
    const manifest = JSON.parse(Buffer.from(manifestBytes).toString()) as { config: { digest: string } };
    expect(manifest.config.digest).toBe(`sha256:${imageId}`);

    // podman, with a store of its own, pulls it back.
    const pull = await puller.podman(["pull", "--tls-verify=false", ref]);
    expect(pull.code, `${describeRun(pull)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    expect(pull.stdout.trim()).toBe(imageId);
    const inspect = await puller.podman(["image", "inspect", ref]);
    expect(inspect.code, describeRun(inspect)).toBe(0);
    const [info] = JSON.parse(inspect.stdout) as PodmanImage[];
    expect(info!.Id).toBe(imageId);
    expect(info!.Digest).toBe(pushedDigest);
    expect(info!.RepoDigests).toContain(`${reg.host}/${ns}/app@${pushedDigest}`);
    expect(info!.Labels?.["org.example.registry-kit"]).toBe("interop");

    // Pull by digest works too.
    const byDigest = await puller.podman(["pull", "--tls-verify=false", `${reg.host}/${ns}/app@${pushedDigest}`]);
    expect(byDigest.code, describeRun(byDigest)).toBe(0);
    expect(byDigest.stdout.trim()).toBe(imageId);

    // podman push to a second repository, then pull that in a third store.
    const again = `${reg.host}/${ns}/again:v2`;
    const againDigestFile = join(puller.dir, "again.digest");
    const podmanPush = await puller.podman(["push", "--tls-verify=false", "--digestfile", againDigestFile, ref, `docker://${again}`]);
    expect(podmanPush.code, `${describeRun(podmanPush)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    const againDigest = readFileSync(againDigestFile, "utf8").trim();
    const third = containersSandbox("podman-third");
    try {
      const pull2 = await third.podman(["pull", "--tls-verify=false", again]);
      expect(pull2.code, describeRun(pull2)).toBe(0);
      expect(pull2.stdout.trim()).toBe(imageId);
      const inspect2 = await third.podman(["image", "inspect", again]);
      const [info2] = JSON.parse(inspect2.stdout) as PodmanImage[];
      expect(info2!.Digest).toBe(againDigest);
      expect(info2!.RootFS.Layers).toEqual(info!.RootFS.Layers);
    } finally {
      third.remove();
    }

    expect(reg.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), reg.recorder.dump()).toEqual([]);
  });

  it("a second tag re-uses what the registry has: no blob bytes are uploaded again", async () => {
    const ref = `${reg.host}/${ns}/app:v1`;
    const tag = await puller.podman(["tag", ref, `${reg.host}/${ns}/app:second`]);
    expect(tag.code, describeRun(tag)).toBe(0);
    reg.recorder.clear();
    const push = await puller.podman(["push", "--tls-verify=false", `${reg.host}/${ns}/app:second`]);
    expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
    // podman knows the layer by the compressed digest of its last push (to
    // "again"), so it may mount it from there (POST ?mount= → 201); what it
    // must not do is send blob bytes (PATCH / PUT on an upload) again.
    const dataUploads = reg.recorder.requests.filter((r) => (r.method === "PATCH" || r.method === "PUT") && r.path.includes("/blobs/uploads/"));
    expect(dataUploads, reg.recorder.dump()).toEqual([]);
    const mounts = reg.recorder.requests.filter((r) => r.method === "POST" && r.path.includes("mount="));
    for (const m of mounts) expect(m.status, reg.recorder.dump()).toBe(201);
    expect(reg.recorder.requests.some((r) => r.method === "PUT" && r.path === `/v2/${ns}/app/manifests/second` && r.status === 201)).toBe(true);
  });

  it("buildah pushes Docker schema 2 (--format v2s2) and zstd-compressed OCI layers; podman pulls both back to the same image", async () => {
    // One fresh image per case: containers/image 5.23 would otherwise reuse
    // (mount) the gzip layer it pushed a moment earlier, whatever
    // --compression-format asks for.
    const cases = [
      { repo: "v2s2", args: ["--format", "v2s2"], manifestType: "application/vnd.docker.distribution.manifest.v2+json", layerType: "application/vnd.docker.image.rootfs.diff.tar.gzip" },
      { repo: "zstd", args: ["--format", "oci", "--compression-format", "zstd"], manifestType: "application/vnd.oci.image.manifest.v1+json", layerType: "application/vnd.oci.image.layer.v1.tar+zstd" },
    ];
    for (const c of cases) {
      const local = `localhost/${ns}/formats-${c.repo}:v1`;
      const imageId = await builder.buildScratchImage(local, { "/formats.txt": `formats ${ns} ${c.repo}\n` });
      const ref = `${reg.host}/${ns}/${c.repo}:v1`;
      const push = await builder.buildah(["push", "--tls-verify=false", ...c.args, local, `docker://${ref}`]);
      expect(push.code, `${describeRun(push)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
      const res = await fetch(`${reg.url}/v2/${ns}/${c.repo}/manifests/v1`, { headers: { Accept: c.manifestType } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(c.manifestType);
      const manifest = (await res.json()) as { mediaType: string; layers: Array<{ mediaType: string }> };
      expect(manifest.mediaType).toBe(c.manifestType);
      expect(manifest.layers.map((l) => l.mediaType)).toEqual([c.layerType]);

      const fresh = containersSandbox(`podman-${c.repo}`);
      try {
        const pull = await fresh.podman(["pull", "--tls-verify=false", ref]);
        expect(pull.code, `${describeRun(pull)}\n--- registry saw ---\n${reg.recorder.dump()}`).toBe(0);
        // schema 2 carries the same config blob, so the image id is unchanged in every format
        expect(pull.stdout.trim()).toBe(imageId);
      } finally {
        fresh.remove();
      }
    }
  });
});
