/**
 * Issue 44, part 1, with a real client: skopeo 1.9 pushes an image and its
 * cosign signatures under `sha256-<hex>.sig` (made by test/trust/helpers/cosign.ts
 * as cosign and containers/image 5.23 write them: Debian's skopeo cannot sign
 * with sigstore keys) to registry-kit; what the registry serves back verifies
 * with registry-kit/trust, and a signature over another digest is refused.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrust, signatureTag, type SignatureArtifact } from "../../src/trust/index.js";
import { cosignSign, generateCosignKey, writeSignatureLayout } from "../trust/helpers/cosign.js";
import { buildTestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

describe("cosign signatures pushed by skopeo, verified by registry-kit/trust", () => {
  let reg: RegistryKit;
  let skopeo: SkopeoSandbox;
  const work = tempDir("trust-skopeo");
  const ns = `trust-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    reg = await startRegistryKit();
  });
  afterAll(async () => {
    await reg?.close();
    skopeo?.remove();
    work.remove();
  });

  /** The `.sig` manifest of `repo` as the registry serves it, with its blobs read over HTTP. */
  async function served(repo: string, tag: string): Promise<SignatureArtifact> {
    const res = await fetch(`${reg.url}/v2/${repo}/manifests/${tag}`, { headers: { Accept: "application/vnd.oci.image.manifest.v1+json" } });
    expect(res.status).toBe(200);
    return {
      manifest: new Uint8Array(await res.arrayBuffer()),
      read: async (digest) => {
        const blob = await fetch(`${reg.url}/v2/${repo}/blobs/${digest}`);
        return blob.ok ? new Uint8Array(await blob.arrayBuffer()) : undefined;
      },
    };
  }

  it("verifies the signature skopeo pushed, names the key, and refuses one over another digest", async () => {
    const img = buildTestImage(join(work.path, "image"), { sizes: [2048] });
    const push = await skopeo.copy(img.ref, `docker://${reg.host}/${ns}/app:v1`);
    expect(push.code, describeRun(push)).toBe(0);
    const tag = signatureTag(img.manifestDigest)!;

    const release = generateCosignKey("pw");
    const good = cosignSign(release.privatePem, "pw", `${reg.host}/${ns}/app:v1`, img.manifestDigest);
    const goodPush = await skopeo.copy(writeSignatureLayout(join(work.path, "sig"), good, tag), `docker://${reg.host}/${ns}/app:${tag}`);
    expect(goodPush.code, describeRun(goodPush)).toBe(0);
    // served byte for byte, annotation and all
    expect((await skopeo.inspectRaw(`docker://${reg.host}/${ns}/app:${tag}`)).equals(good.manifest.bytes)).toBe(true);

    // the same key's signature over another image, pushed where this image's signatures go in a second repository
    const other = cosignSign(release.privatePem, "pw", `${reg.host}/${ns}/copy:v1`, `sha256:${"0".repeat(64)}`);
    const otherPush = await skopeo.copy(writeSignatureLayout(join(work.path, "other"), other, tag), `docker://${reg.host}/${ns}/copy:${tag}`);
    expect(otherPush.code, describeRun(otherPush)).toBe(0);

    const trust = createTrust({ keys: { release: release.publicPem, stranger: generateCosignKey("pw").publicPem } });
    const verdicts = await trust.verifySignatures({ digest: img.manifestDigest, signatures: [await served(`${ns}/app`, tag), await served(`${ns}/copy`, tag)] });
    expect(verdicts).toMatchObject([
      { ok: true, kind: "cosign", by: "release", artifact: 0 },
      { ok: false, kind: "cosign", reason: "digest-mismatch", artifact: 1 },
    ]);
    expect(reg.recorder.requests.filter((r) => r.status >= 500), reg.recorder.dump()).toEqual([]);
  });
});
