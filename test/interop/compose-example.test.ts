/**
 * Issue 42 part 4: the wrappers of examples/compose (public names only) on a
 * registry served by the Node adapter, driven by skopeo. A blob over the
 * limit in a limited repository is refused with the wrapper's `denied`
 * message, which skopeo prints; the same image goes to an unlimited
 * repository; pulling it back records every pulled digest in the report.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobSizeLimit, lastPulled } from "../../examples/compose/wrappers.js";
import { buildTestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

describe("examples/compose with skopeo", () => {
  let reg: RegistryKit;
  let skopeo: SkopeoSandbox;
  const pulled = lastPulled();
  const work = tempDir("compose-example");
  const ns = `compose-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    reg = await startRegistryKit({
      wrapStores: [blobSizeLimit({ maxBytes: 1_000_000, applies: (name) => name.startsWith(`${ns}/limited/`) }), pulled.wrap],
    });
  });
  afterAll(async () => {
    await reg?.close();
    skopeo?.remove();
    work.remove();
  });

  it("refuses a layer over the limit in a limited repository with the wrapper's message, takes it elsewhere, and reports what was pulled", async () => {
    const img = buildTestImage(join(work.path, "oci-src"), { sizes: [4096, 1_500_000] });

    const refused = await skopeo.copy(img.ref, `docker://${reg.host}/${ns}/limited/app:v1`);
    expect(refused.code, describeRun(refused)).not.toBe(0);
    expect(refused.stderr).toContain(`blobs over 1000000 bytes are not accepted in ${ns}/limited/app`);
    expect(reg.recorder.requests.filter((r) => r.status === 403).length, reg.recorder.dump()).toBeGreaterThan(0);
    expect(reg.recorder.requests.filter((r) => r.status >= 500), reg.recorder.dump()).toEqual([]);
    const missing = await fetch(`${reg.url}/v2/${ns}/limited/app/manifests/v1`);
    expect(missing.status).toBe(404);

    const dest = `docker://${reg.host}/${ns}/open/app:v1`;
    const push = await skopeo.copy(img.ref, dest);
    expect(push.code, describeRun(push)).toBe(0);
    expect(pulled.report()).toEqual([]);

    const pull = await skopeo.copy(dest, `oci:${join(work.path, "oci-back")}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    const report = pulled.report();
    const digests = new Set(report.map((r) => `${r.kind} ${r.repository} ${r.digest}`));
    expect(digests.has(`manifest ${ns}/open/app ${img.manifestDigest}`), JSON.stringify(report)).toBe(true);
    for (const layer of img.layers) expect(digests.has(`blob ${ns}/open/app ${layer.digest}`), JSON.stringify(report)).toBe(true);
    expect(digests.has(`blob ${ns}/open/app ${img.config.digest}`), JSON.stringify(report)).toBe(true);
    expect(report.every((r) => !r.repository.includes("/limited/"))).toBe(true);
  });
});
