/**
 * sigstore bundles as OCI 1.1 referrers: keyless ones made with
 * @sigstore/sign against @sigstore/mock's Fulcio and Rekor (a real node:http
 * server on 127.0.0.1), and bundles signed with a plain key. On every case
 * registry-kit's verdict is compared with @sigstore/verify's.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrust } from "../../src/trust/index.js";
import type { SignatureVerdict } from "../../src/trust/index.js";
import { artifactOf } from "./helpers/artifacts.js";
import { bundleManifest, statement } from "./helpers/bundle-artifact.js";
import { blobOf } from "./helpers/cosign.js";
import { keyBundle, keySigner, oracle, startMockSigstore, type MockSigstore } from "./helpers/sigstore.js";

const ISSUER = "https://token.actions.example";
const SUBJECT = "https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main";
const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", layers: [] }));
const image = blobOf(manifest);
const SUBJECT_DESC = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: image.digest, size: manifest.length };
const otherManifest = Buffer.from(JSON.stringify({ schemaVersion: 2, other: true }));

type Json = Record<string, any>;
const clone = (b: Json): Json => JSON.parse(JSON.stringify(b)) as Json;
const flip = (b64: string) => {
  const bytes = Buffer.from(b64, "base64");
  bytes[bytes.length - 5]! ^= 0x55;
  return bytes.toString("base64");
};

function outcome(v: SignatureVerdict): string {
  return v.ok ? "ok" : v.reason;
}

describe("sigstore bundles", () => {
  let mock: MockSigstore;
  let stranger: MockSigstore;
  let backdated: MockSigstore;
  beforeAll(async () => {
    mock = await startMockSigstore();
    stranger = await startMockSigstore();
    backdated = await startMockSigstore({ caClock: new Date(Date.now() - 3_600_000) });
  });
  afterAll(async () => {
    await Promise.all([mock?.close(), stranger?.close(), backdated?.close()]);
  });

  const identity = { issuer: ISSUER, subject: SUBJECT };
  const keyless = (identities = [identity]) => createTrust({ sigstore: { trustedRoot: mock.trustedRoot, identities } });
  async function verify(trust: ReturnType<typeof createTrust>, bundle: Json): Promise<string> {
    const [v] = await trust.verifySignatures({ digest: image.digest, manifest, signatures: [artifactOf(bundleManifest(bundle, SUBJECT_DESC))] });
    return outcome(v!);
  }

  it("accepts keyless DSSE and message-signature bundles, naming the identity; @sigstore/verify agrees", async () => {
    const dsse = await mock.sign(statement("127.0.0.1/signed/app", image.digest), { ...identity, dsse: true });
    const message = await mock.sign(manifest, { ...identity, dsse: false });
    const verdicts = await keyless().verifySignatures({
      digest: image.digest,
      manifest,
      signatures: [artifactOf(bundleManifest(dsse, SUBJECT_DESC)), artifactOf(bundleManifest(message, SUBJECT_DESC))],
    });
    expect(verdicts).toEqual([
      { ok: true, kind: "sigstore-bundle", by: `${ISSUER} ${SUBJECT}`, identity, artifact: 0, layer: 0 },
      { ok: true, kind: "sigstore-bundle", by: `${ISSUER} ${SUBJECT}`, identity, artifact: 1, layer: 0 },
    ]);
    expect(oracle(dsse, { trustedRoot: mock.trustedRoot, identity })).toBe("ok");
    expect(oracle(message, { artifact: manifest, trustedRoot: mock.trustedRoot, identity })).toBe("ok");
  });

  it("refuses each bad keyless case with its own reason, where @sigstore/verify refuses too", async () => {
    // Certificates are valid from the second they are issued and entries name the second they are logged:
    // `earlier`'s certificate is valid when `good` is logged, `later`'s entry is logged while `good`'s is valid.
    const earlier = await mock.sign(manifest, { ...identity, dsse: false });
    const good = await mock.sign(manifest, { ...identity, dsse: false });
    const later = await mock.sign(manifest, { ...identity, dsse: false });
    const cases: Record<string, { bundle: Json; identities?: (typeof identity)[]; root?: MockSigstore }> = {};
    cases["identity-mismatch"] = { bundle: good, identities: [{ issuer: ISSUER, subject: "https://github.com/evil/app/.github/workflows/x.yml@refs/heads/main" }] };
    cases["other issuer"] = { bundle: good, identities: [{ issuer: "https://accounts.example", subject: SUBJECT }] };
    cases["untrusted-chain"] = { bundle: await stranger.sign(manifest, { ...identity, dsse: false }) };
    // a CA whose clock is an hour behind: its certificate had expired when Rekor logged the signature
    cases["expired-certificate"] = { bundle: await backdated.sign(manifest, { ...identity, dsse: false }), root: backdated };
    const badSet = clone(good);
    badSet.verificationMaterial.tlogEntries[0].inclusionPromise.signedEntryTimestamp = flip(badSet.verificationMaterial.tlogEntries[0].inclusionPromise.signedEntryTimestamp);
    cases["tlog-invalid (SET)"] = { bundle: badSet };
    const otherEntry = clone(good);
    otherEntry.verificationMaterial.tlogEntries = later.verificationMaterial.tlogEntries;
    cases["tlog-invalid (another entry)"] = { bundle: otherEntry };
    // another certificate of the same identity: the log entry (signature and digest) still matches
    const otherCert = clone(good);
    otherCert.verificationMaterial.x509CertificateChain = earlier.verificationMaterial.x509CertificateChain;
    cases["wrong-key"] = { bundle: otherCert };
    cases["digest-mismatch"] = { bundle: await mock.sign(otherManifest, { ...identity, dsse: false }) };

    const ours: Record<string, string> = {};
    const theirs: Record<string, string> = {};
    for (const [name, c] of Object.entries(cases)) {
      const root = (c.root ?? mock).trustedRoot;
      ours[name] = await verify(createTrust({ sigstore: { trustedRoot: root, identities: c.identities ?? [identity] } }), c.bundle);
      theirs[name] = oracle(c.bundle, { artifact: manifest, trustedRoot: root, identity: c.identities?.[0] ?? identity });
    }
    expect(ours).toEqual({
      "identity-mismatch": "identity-mismatch",
      "other issuer": "identity-mismatch",
      "untrusted-chain": "untrusted-chain",
      "expired-certificate": "expired-certificate",
      "tlog-invalid (SET)": "tlog-invalid",
      "tlog-invalid (another entry)": "tlog-invalid",
      "wrong-key": "wrong-key",
      "digest-mismatch": "digest-mismatch",
    });
    expect(theirs).toEqual({
      "identity-mismatch": "UNTRUSTED_SIGNER_ERROR",
      "other issuer": "UNTRUSTED_SIGNER_ERROR",
      "untrusted-chain": "CERTIFICATE_ERROR",
      "expired-certificate": "CERTIFICATE_ERROR",
      "tlog-invalid (SET)": "TLOG_INCLUSION_PROMISE_ERROR",
      "tlog-invalid (another entry)": "TLOG_BODY_ERROR",
      "wrong-key": "SIGNATURE_ERROR",
      // given the verified manifest as the artifact, the signature over another one fails
      "digest-mismatch": "SIGNATURE_ERROR",
    });
  });

  it("checks the inclusion proof and its checkpoint as well as the SET, and needs both where @sigstore/verify does", async () => {
    const good = await mock.sign(manifest, { ...identity, dsse: false });
    const entry = (b: Json) => b.verificationMaterial.tlogEntries[0];
    const proofOnly = clone(good);
    delete entry(proofOnly).inclusionPromise;
    const setOnly = clone(good);
    delete entry(setOnly).inclusionProof;
    const badRoot = clone(good);
    const note: string = entry(badRoot).inclusionProof.checkpoint.envelope;
    const lines = note.split("\n");
    lines[2] = Buffer.alloc(32, 7).toString("base64"); // another root hash under the old signature
    entry(badRoot).inclusionProof.checkpoint.envelope = lines.join("\n");
    const badSig = clone(good);
    entry(badSig).inclusionProof.checkpoint.envelope = note.replace(/ (\S+)\n$/, (_m, sig: string) => ` ${flip(sig)}\n`);
    const badPath = clone(good);
    entry(badPath).inclusionProof.hashes = [Buffer.alloc(32, 1).toString("base64")];
    const neither = clone(proofOnly);
    delete entry(neither).inclusionProof;
    const cases = { proofOnly, setOnly, badRoot, badSig, badPath, neither };
    const ours: Record<string, string> = {};
    const theirs: Record<string, string> = {};
    for (const [name, b] of Object.entries(cases)) {
      ours[name] = await verify(keyless(), b);
      theirs[name] = oracle(b, { artifact: manifest, trustedRoot: mock.trustedRoot, identity });
    }
    // a v0.2+ bundle must carry the proof; without a SET nothing vouches for the signing time
    expect(ours).toEqual({ proofOnly: "tlog-invalid", setOnly: "malformed", badRoot: "tlog-invalid", badSig: "tlog-invalid", badPath: "tlog-invalid", neither: "malformed" });
    expect(theirs).toEqual({
      proofOnly: "TIMESTAMP_ERROR",
      setOnly: "invalid v0.2 bundle",
      badRoot: "TLOG_INCLUSION_PROOF_ERROR",
      badSig: "TLOG_INCLUSION_PROOF_ERROR",
      badPath: "TLOG_INCLUSION_PROOF_ERROR",
      neither: "invalid v0.2 bundle",
    });
  });

  it("checks the certificate's SCTs against the trusted CT logs, and needs one, as @sigstore/verify does", async () => {
    const unlogged = await startMockSigstore({ ctLog: false });
    try {
      const noSct = await unlogged.sign(manifest, { ...identity, dsse: false });
      const good = await mock.sign(manifest, { ...identity, dsse: false });
      const otherCt = clone(mock.trustedRoot);
      otherCt.ctlogs[0].publicKey.rawBytes = (stranger.trustedRoot as Json).ctlogs[0].publicKey.rawBytes;
      const cases: [Json, Json][] = [
        [noSct, unlogged.trustedRoot],
        [good, otherCt],
      ];
      for (const [bundle, trustedRoot] of cases) {
        expect(await verify(createTrust({ sigstore: { trustedRoot, identities: [identity] } }), bundle)).toBe("sct-invalid");
        expect(oracle(bundle, { artifact: manifest, trustedRoot, identity })).toBe("CERTIFICATE_ERROR");
      }
    } finally {
      await unlogged.close();
    }
  });

  it("refuses a DSSE statement about another digest, which @sigstore/verify leaves to the caller", async () => {
    const bundle = await mock.sign(statement("127.0.0.1/signed/app", blobOf(otherManifest).digest), { ...identity, dsse: true });
    expect(await verify(keyless(), bundle)).toBe("digest-mismatch");
    // sigstore-js checks the envelope, not what the statement is about (cosign does that itself)
    expect(oracle(bundle, { trustedRoot: mock.trustedRoot, identity })).toBe("ok");
  });

  it("refuses a keyless bundle without a trusted root, and one without a log entry", async () => {
    const good = await mock.sign(manifest, { ...identity, dsse: false });
    expect(await verify(createTrust({ keys: {} }), good)).toBe("not-configured");
    const unlogged = clone(good);
    unlogged.verificationMaterial.tlogEntries = [];
    expect(await verify(keyless(), unlogged)).toBe("tlog-invalid");
    expect(oracle(unlogged, { artifact: manifest, trustedRoot: mock.trustedRoot, identity })).not.toBe("ok");
  });

  describe("with a key (offline)", () => {
    const release = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const other = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const ed = generateKeyPairSync("ed25519");
    const pem = (k: typeof release) => k.publicKey.export({ type: "spki", format: "pem" }) as string;
    const keys = { release: pem(release), ed: pem(ed) };
    const ecSign = (k: typeof release) => (data: Buffer) => sign("sha256", data, k.privateKey);

    it("accepts DSSE and message signatures by the hinted key; @sigstore/verify agrees", async () => {
      const trust = createTrust({ keys });
      const dsse = await keyBundle(keySigner(release.privateKey, "release", ecSign(release)), statement("app", image.digest), true);
      const message = await keyBundle(keySigner(release.privateKey, "release", ecSign(release)), manifest, false);
      const edBundle = await keyBundle(keySigner(ed.privateKey, "ed", (d) => sign(null, d, ed.privateKey)), statement("app", image.digest), true);
      for (const b of [dsse, message, edBundle]) {
        const [v] = await trust.verifySignatures({ digest: image.digest, manifest, signatures: [artifactOf(bundleManifest(b, SUBJECT_DESC))] });
        expect(v).toMatchObject({ ok: true, kind: "sigstore-bundle" });
        expect(oracle(b, { artifact: manifest, keys })).toBe("ok");
      }
      expect(await verify(trust, edBundle)).toBe("ok");
    });

    it("refuses a wrong key, a garbled signature and another digest with their reasons; @sigstore/verify refuses too", async () => {
      const trust = createTrust({ keys });
      const wrong = await keyBundle(keySigner(other.privateKey, "release", ecSign(other)), manifest, false);
      const truncated = clone(await keyBundle(keySigner(release.privateKey, "release", ecSign(release)), manifest, false));
      truncated.messageSignature.signature = Buffer.from(truncated.messageSignature.signature, "base64").subarray(0, 20).toString("base64");
      const elsewhere = await keyBundle(keySigner(release.privateKey, "release", ecSign(release)), otherManifest, false);
      const dsseGarbled = clone(await keyBundle(keySigner(release.privateKey, "release", ecSign(release)), statement("app", image.digest), true));
      dsseGarbled.dsseEnvelope.signatures[0].sig = flip(dsseGarbled.dsseEnvelope.signatures[0].sig);
      const results = await Promise.all([wrong, truncated, elsewhere, dsseGarbled].map((b) => verify(trust, b)));
      expect(results).toEqual(["wrong-key", "bad-signature", "digest-mismatch", expect.stringMatching(/^(wrong-key|bad-signature)$/)]);
      for (const b of [wrong, truncated, elsewhere, dsseGarbled]) expect(oracle(b, { artifact: manifest, keys })).not.toBe("ok");
    });
  });
});
