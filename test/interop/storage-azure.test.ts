/**
 * `registry-kit serve` on a config.yml with `storage.azure` (Distribution's
 * key names, plus `serviceurl` for the emulator) against Azurite, the Azure
 * Blob emulator from npm: skopeo pushes an image whose big layer is sent in
 * several chunks (so uploads are appended under the blob lease and committed by
 * Copy Blob), pulls it back with every digest checked, blob GETs answer 307 to
 * a SAS URL that Azurite serves, and tags, catalog and delete behave.
 * Issue 43, item 6.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { azureStorage } from "../../src/storage/azure/index.js";
import { useAzurite } from "../storage/helpers/azurite.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir, type Background } from "./helpers/process.js";
import { started, startOnConfig, writeConfig } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const MiB = 1024 * 1024;
const azurite = useAzurite({ container: "registry-interop" });

describe("registry-kit serve on storage.azure (Azurite)", () => {
  const work = tempDir("storage-azure");
  let image: TestImage;
  let skopeo: SkopeoSandbox;
  let server: Background | undefined;
  let host = "";

  beforeAll(async () => {
    image = buildTestImage(join(work.path, "image"), { sizes: [12 * MiB, 1 * MiB] });
    skopeo = skopeoSandbox();
    const port = await freePort();
    const dir = join(work.path, "server");
    mkdirSync(dir, { recursive: true });
    const options = azurite.options();
    const config = writeConfig(dir, {
      version: 0.1,
      http: { addr: `127.0.0.1:${port}`, secret: "azure-interop-secret" },
      storage: {
        azure: {
          accountname: options.accountName,
          accountkey: options.accountKey,
          container: options.container,
          serviceurl: options.serviceURL,
          rootdirectory: "/interop",
        },
        delete: { enabled: true },
      },
    });
    server = await startOnConfig("registry-kit", config, dir, started(`http://127.0.0.1:${port}/v2/`));
    host = `127.0.0.1:${port}`;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    skopeo?.remove();
    work.remove();
  });

  it("skopeo pushes and pulls back byte-identical through the Azure driver", async () => {
    // Chunked: skopeo sends the 12 MiB layer as one PATCH; the registry appends it as 8 MiB blocks.
    const push = await skopeo.copy(image.ref, `docker://${host}/azure/app:v1`);
    expect(push.code, describeRun(push)).toBe(0);
    const back = join(work.path, "back");
    const pull = await skopeo.copy(`docker://${host}/azure/app:v1`, `oci:${back}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(image.manifestDigest);
    expect(got.layerDigests).toEqual(image.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest, `content of blob ${name}`).toBe(name);

    // The blobs are in the container under the root directory, and no upload is left behind.
    const store = azureStorage({ ...azurite.options(), rootDirectory: "interop" });
    const blobs = (await store.list("blobs")).keys;
    for (const layer of image.layers) expect(blobs.some((k) => k.includes(layer.digest.slice("sha256:".length)))).toBe(true);
    expect((await store.list("repositories")).keys.filter((k) => k.includes("/_uploads/"))).toEqual([]);
  }, 300_000);

  it("answers a blob GET with 307 to a SAS URL that Azurite serves", async () => {
    const layer = image.layers[1]!;
    const get = await fetch(`http://${host}/v2/azure/app/blobs/${layer.digest}`, { redirect: "manual" });
    await get.arrayBuffer();
    expect(get.status).toBe(307);
    const location = new URL(get.headers.get("location")!);
    expect(location.origin).toBe(new URL(azurite.serviceURL).origin);
    expect(location.searchParams.get("sig")).toBeTruthy();
    const fromStore = new Uint8Array(await (await fetch(location)).arrayBuffer());
    expect(Buffer.from(fromStore).equals(layer.bytes)).toBe(true);
  });

  it("lists tags and the catalog, and deletes a manifest", async () => {
    const copy = await skopeo.copy(`docker://${host}/azure/app:v1`, `docker://${host}/azure/app:v2`);
    expect(copy.code, describeRun(copy)).toBe(0);
    const tags = await (await fetch(`http://${host}/v2/azure/app/tags/list`)).json();
    expect(tags).toEqual({ name: "azure/app", tags: ["v1", "v2"] });
    const catalog = await (await fetch(`http://${host}/v2/_catalog`)).json();
    expect(catalog).toEqual({ repositories: ["azure/app"] });
    const del = await skopeo.raw(["delete", "--tls-verify=false", `docker://${host}/azure/app:v2`]);
    expect(del.code, describeRun(del)).toBe(0);
    const head = await fetch(`http://${host}/v2/azure/app/manifests/${image.manifestDigest}`, { method: "HEAD" });
    expect(head.status).toBe(404);
  }, 120_000);
});
