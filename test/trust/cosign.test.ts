/**
 * cosign key-based signatures (the `sha256-<hex>.sig` tag scheme and the OCI
 * 1.1 referrer form) made by test/trust/helpers/cosign.ts exactly as cosign and
 * containers/image 5.23 write them, verified by registry-kit/trust; every bad
 * case refused with its own reason.
 */
import { generateKeyPairSync } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createTrust, signatureTag } from "../../src/trust/index.js";
import { artifactOf } from "./helpers/artifacts.js";
import {
  blobOf,
  cosignSign,
  decryptCosignKey,
  generateCosignKey,
  signBytes,
  signatureManifest,
  simpleSigningPayload,
  type KeyType,
} from "./helpers/cosign.js";

const PASSWORD = "correct horse";
const REF = "127.0.0.1:5000/signed/app:v1";
const DIGEST = blobOf("an image manifest").digest;
const OTHER = blobOf("another image manifest").digest;

describe("cosign simple-signing signatures", () => {
  let release: { privatePem: string; publicPem: string };
  let other: { privatePem: string; publicPem: string };
  beforeAll(() => {
    release = generateCosignKey(PASSWORD);
    other = generateCosignKey(PASSWORD);
  });

  it("writes an ENCRYPTED COSIGN PRIVATE KEY that opens only with its password", () => {
    expect(release.privatePem).toMatch(/^-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\n/);
    const json = JSON.parse(Buffer.from(release.privatePem.split("\n").slice(1, -2).join(""), "base64").toString()) as Record<string, any>;
    expect(json.kdf).toMatchObject({ name: "scrypt", params: { N: 32768, r: 8, p: 1 } });
    expect(json.cipher.name).toBe("nacl/secretbox");
    expect(() => decryptCosignKey(release.privatePem, "wrong")).toThrow(/wrong password/);
  });

  it("accepts a signature in the .sig tag scheme by the configured key", async () => {
    const trust = createTrust({ keys: { release: release.publicPem } });
    const verdicts = await trust.verifySignatures({ digest: DIGEST, signatures: [artifactOf(cosignSign(release.privatePem, PASSWORD, REF, DIGEST))] });
    expect(verdicts).toEqual([{ ok: true, kind: "cosign", by: "release", artifact: 0, layer: 0 }]);
    expect(signatureTag(DIGEST)).toBe(`sha256-${DIGEST.slice(7)}.sig`);
    expect(signatureTag("sha256:nothex")).toBeUndefined();
  });

  it.each<KeyType>(["P-384", "Ed25519", "RSA"])("accepts %s keys", async (type) => {
    const key = generateCosignKey(PASSWORD, type);
    const trust = createTrust({ keys: { other: other.publicPem, [type]: key.publicPem } });
    const verdicts = await trust.verifySignatures({ digest: DIGEST, signatures: [artifactOf(cosignSign(key.privatePem, PASSWORD, REF, DIGEST))] });
    expect(verdicts).toMatchObject([{ ok: true, by: type }]);
  });

  it("accepts the OCI 1.1 referrer form (cosign's artifactType, subject)", async () => {
    const key = decryptCosignKey(release.privatePem, PASSWORD);
    const payload = simpleSigningPayload(REF, DIGEST);
    const signed = signatureManifest([{ payload, signature: signBytes(key, payload).toString("base64") }], {
      artifactType: "application/vnd.dev.cosign.artifact.sig.v1+json",
      subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: DIGEST, size: 17 },
    });
    const verdicts = await createTrust({ keys: { release: release.publicPem } }).verifySignatures({ digest: DIGEST, signatures: [artifactOf(signed)] });
    expect(verdicts).toMatchObject([{ ok: true, by: "release" }]);
  });

  it("refuses each bad case with its own reason", async () => {
    const trust = createTrust({ keys: { release: release.publicPem } });
    const key = decryptCosignKey(release.privatePem, PASSWORD);
    const payload = simpleSigningPayload(REF, DIGEST);
    const good = signBytes(key, payload);
    const layer = (signature: string, p = payload) => artifactOf(signatureManifest([{ payload: p, signature }]));
    const cases = {
      "digest-mismatch": artifactOf(cosignSign(release.privatePem, PASSWORD, REF, OTHER)),
      "wrong-key": artifactOf(cosignSign(other.privatePem, PASSWORD, REF, DIGEST)),
      // the payload changed after signing (a consistent blob, the old signature)
      tampered: layer(good.toString("base64"), simpleSigningPayload("evil/app:v1", DIGEST)),
      truncated: layer(good.subarray(0, good.length - 9).toString("base64")),
      "not base64": layer("!!not base64!!"),
      "blob-mismatch": artifactOf(cosignSign(release.privatePem, PASSWORD, REF, DIGEST), (_d, bytes) => bytes.map((b) => b ^ 1)),
      "not JSON": layer(signBytes(key, Buffer.from("{not json")).toString("base64"), Buffer.from("{not json")),
    };
    const verdicts = await trust.verifySignatures({ digest: DIGEST, signatures: Object.values(cases) });
    expect(Object.fromEntries(Object.keys(cases).map((name, i) => [name, verdicts[i]!.ok ? "ok" : verdicts[i]!.reason]))).toEqual({
      "digest-mismatch": "digest-mismatch",
      "wrong-key": "wrong-key",
      tampered: "wrong-key",
      truncated: "bad-signature",
      "not base64": "bad-signature",
      "blob-mismatch": "blob-mismatch",
      "not JSON": "malformed",
    });
    expect(verdicts[0]).toMatchObject({ kind: "cosign", detail: `the signature is for ${OTHER}, not ${DIGEST}` });
  });

  it("gives one verdict per layer of a .sig manifest with several signatures", async () => {
    const payload = simpleSigningPayload(REF, DIGEST);
    const signed = signatureManifest([
      { payload, signature: signBytes(decryptCosignKey(other.privatePem, PASSWORD), payload).toString("base64") },
      { payload, signature: signBytes(decryptCosignKey(release.privatePem, PASSWORD), payload).toString("base64") },
    ]);
    const verdicts = await createTrust({ keys: { release: release.publicPem } }).verifySignatures({ digest: DIGEST, signatures: [artifactOf(signed)] });
    expect(verdicts.map((v) => [v.layer, v.ok ? v.by : v.reason])).toEqual([
      [0, "wrong-key"],
      [1, "release"],
    ]);
  });

  it("refuses without keys, a missing blob, a manifest that is no signature, and garbage", async () => {
    const signed = cosignSign(release.privatePem, PASSWORD, REF, DIGEST);
    const sbom = { manifest: blobOf(JSON.stringify({ schemaVersion: 2, artifactType: "application/spdx+json", layers: [{ mediaType: "application/spdx+json", digest: DIGEST, size: 1 }] })), blobs: [] };
    const verdicts = await createTrust({ keys: { release: release.publicPem } }).verifySignatures({
      digest: DIGEST,
      signatures: [artifactOf(sbom), artifactOf({ manifest: signed.manifest, blobs: [] }), { manifest: new TextEncoder().encode("]"), read: async () => undefined }],
    });
    expect(verdicts.map((v) => !v.ok && v.reason)).toEqual(["unsupported", "malformed", "malformed"]);
    const none = await createTrust({}).verifySignatures({ digest: DIGEST, signatures: [artifactOf(signed)] });
    expect(none).toMatchObject([{ ok: false, reason: "not-configured" }]);
  });

  it("refuses a .sig manifest with more than 64 signature layers without verifying them", async () => {
    const payload = simpleSigningPayload(REF, DIGEST);
    const signature = signBytes(decryptCosignKey(release.privatePem, PASSWORD), payload).toString("base64");
    const many = signatureManifest(Array.from({ length: 65 }, () => ({ payload, signature })));
    const verdicts = await createTrust({ keys: { release: release.publicPem } }).verifySignatures({ digest: DIGEST, signatures: [artifactOf(many)] });
    expect(verdicts).toEqual([{ ok: false, artifact: 0, layer: 0, reason: "malformed", detail: "the signature manifest has 65 layers, more than 64" }]);
  });

  it("names a key it cannot use at createTrust", () => {
    const dsa = generateKeyPairSync("ec", { namedCurve: "secp256k1" }).publicKey.export({ type: "spki", format: "pem" }) as string;
    expect(() => createTrust({ keys: { k1: dsa } })).toThrow(/trust key "k1": unsupported EC curve/);
    expect(() => createTrust({ keys: { junk: "hello" } })).toThrow(/trust key "junk": not a PEM PUBLIC KEY/);
  });
});
