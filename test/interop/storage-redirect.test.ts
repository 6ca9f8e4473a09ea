/**
 * `storage.redirect` on a real S3 server (Ceph radosgw): Debian's
 * `docker-registry` (Distribution 2.8) and `registry-kit serve`, each started
 * on the same config file shape (S3 storage, redirect left at its default),
 * answer blob GETs with 307 to a presigned radosgw URL. skopeo pushes through
 * each and pulls back with digests verified, podman pulls too, and a counting
 * TCP proxy in front of each registry shows that the registry wrote only a
 * few KiB (manifests, headers) while the clients fetched megabytes of layers
 * from radosgw. With `storage.redirect.disable: true` the same pull goes
 * through the registry. Issue 17, item 6.
 */
import { mkdirSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useRadosgw } from "../storage/helpers/rgw.js";
import { containersSandbox } from "./helpers/containers.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir, type Background } from "./helpers/process.js";
import { startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const MiB = 1024 * 1024;
const rgw = useRadosgw({ bucket: "redirect-interop" });

/** A TCP proxy that counts the bytes the upstream (the registry) sends to clients. */
async function countingProxy(upstreamPort: number): Promise<{ port: number; sent: () => number; close: () => Promise<void> }> {
  let sent = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port: upstreamPort });
    upstream.on("data", (chunk: Buffer) => (sent += chunk.length));
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    sent: () => sent,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.unref();
    }),
  };
}

interface Running {
  proc: Background;
  proxy: Awaited<ReturnType<typeof countingProxy>>;
  host: string;
}

describe("storage.redirect on radosgw, Distribution 2.8 and registry-kit serve on the same config", () => {
  const work = tempDir("storage-redirect");
  let image: TestImage;
  let skopeo: SkopeoSandbox;
  const started: Running[] = [];

  // Distribution 2.8's S3 driver panics at start when AWS_CA_BUNDLE is set
  // ("LoadCustomCABundleError ... HTTPClient's transport unsupported type"),
  // as it is on some build machines; radosgw here is plain http anyway.
  const caBundle = process.env.AWS_CA_BUNDLE;
  beforeAll(() => {
    delete process.env.AWS_CA_BUNDLE;
    image = buildTestImage(join(work.path, "image"), { sizes: [3 * MiB, 2 * MiB] });
    skopeo = skopeoSandbox();
  });
  afterAll(async () => {
    if (caBundle !== undefined) process.env.AWS_CA_BUNDLE = caBundle;
    for (const r of started) {
      await r.proc.stop();
      await r.proxy.close();
    }
    skopeo?.remove();
    work.remove();
  });

  async function start(which: SameConfigServer, label: string, redirect?: { disable: boolean }): Promise<Running> {
    const port = await freePort();
    const dir = join(work.path, label);
    mkdirSync(dir, { recursive: true });
    const config = writeConfig(dir, {
      version: 0.1,
      http: { addr: `127.0.0.1:${port}`, secret: "same-secret-for-both-registries" },
      storage: {
        s3: {
          region: rgw.region,
          bucket: rgw.bucket,
          regionendpoint: rgw.endpoint,
          accesskey: rgw.accessKeyId,
          secretkey: rgw.secretAccessKey,
          secure: false,
          v4auth: true,
          rootdirectory: `/${label}`,
        },
        ...(redirect ? { redirect } : {}),
        delete: { enabled: true },
      },
    });
    // Ready at a 200 from /v2/ (no auth here); registry-kit answers 503 while it starts.
    const proc = await startOnConfig(which, config, dir, async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v2/`);
      await res.arrayBuffer();
      return res.status === 200;
    });
    const proxy = await countingProxy(port);
    const running = { proc, proxy, host: `127.0.0.1:${proxy.port}` };
    started.push(running);
    return running;
  }

  /** skopeo pulls `ref` into an OCI layout and checks every digest against the pushed image. */
  async function pullAndVerify(ref: string, label: string): Promise<void> {
    const back = join(work.path, `back-${label}`);
    const pull = await skopeo.copy(ref, `oci:${back}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(image.manifestDigest);
    expect(got.layerDigests).toEqual(image.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest, `content of blob ${name}`).toBe(name);
  }

  const layerBytes = () => image.layers.reduce((n, l) => n + l.size, 0);

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: blob GET answers 307 to a presigned radosgw URL that serves the blob; skopeo and podman pull through it while the registry sends a few KiB`, async () => {
      const reg = await start(which, which);
      const ref = `docker://${reg.host}/redirect/app:v1`;
      const push = await skopeo.copy(image.ref, ref);
      expect(push.code, describeRun(push)).toBe(0);

      const layer = image.layers[0]!;
      const get = await fetch(`http://${reg.host}/v2/redirect/app/blobs/${layer.digest}`, { redirect: "manual" });
      await get.arrayBuffer();
      expect(get.status).toBe(307);
      const location = get.headers.get("location")!;
      expect(new URL(location).origin).toBe(new URL(rgw.endpoint).origin);
      expect(location).toContain("X-Amz-Signature=");
      const fromStore = new Uint8Array(await (await fetch(location)).arrayBuffer());
      expect(fromStore.length).toBe(layer.size);
      expect(Buffer.from(fromStore).equals(layer.bytes)).toBe(true);

      const before = reg.proxy.sent();
      await pullAndVerify(ref, which);
      const podman = containersSandbox(`pr-${which.slice(0, 4)}`);
      try {
        const pull = await podman.podman(["pull", "--tls-verify=false", `${reg.host}/redirect/app:v1`]);
        expect(pull.code, describeRun(pull)).toBe(0);
        const inspect = await podman.podman(["image", "inspect", "--format", "{{.Digest}}", `${reg.host}/redirect/app:v1`]);
        expect(inspect.stdout.trim()).toBe(image.manifestDigest);
      } finally {
        podman.remove();
      }
      const served = reg.proxy.sent() - before;
      console.log(`[redirect] ${which}: two pulls of ${(2 * layerBytes() / MiB).toFixed(1)} MiB of layers; the registry sent ${served} bytes`);
      expect(served).toBeLessThan(64 * 1024);
    }, 300_000);
  }

  it("registry-kit never redirects a HEAD (Distribution 2.8 does: observed here)", async () => {
    const [dist, kit] = [started[0]!, started[1]!]; // started in this order by the tests above
    const digest = image.layers[0]!.digest;
    const kitHead = await fetch(`http://${kit.host}/v2/redirect/app/blobs/${digest}`, { method: "HEAD", redirect: "manual" });
    expect(kitHead.status).toBe(200);
    expect(kitHead.headers.get("content-length")).toBe(String(image.layers[0]!.size));
    const distHead = await fetch(`http://${dist.host}/v2/redirect/app/blobs/${digest}`, { method: "HEAD", redirect: "manual" });
    // Distribution presigns a HEAD as well; registry-kit answers it itself (no bytes either way).
    expect(distHead.status).toBe(307);
  });

  it("with storage.redirect.disable: true both serve the blob bytes themselves, and skopeo's pull is the same", async () => {
    for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
      // The same bucket root as the redirecting instance: the image is already there.
      const reg = await start(which, which, { disable: true });
      const layer = image.layers[0]!;
      const get = await fetch(`http://${reg.host}/v2/redirect/app/blobs/${layer.digest}`, { redirect: "manual" });
      const body = new Uint8Array(await get.arrayBuffer());
      expect(get.status, which).toBe(200);
      expect(Buffer.from(body).equals(layer.bytes), which).toBe(true);
      const before = reg.proxy.sent();
      await pullAndVerify(`docker://${reg.host}/redirect/app:v1`, `${which}-direct`);
      expect(reg.proxy.sent() - before, which).toBeGreaterThan(layerBytes());
    }
  }, 300_000);
});
