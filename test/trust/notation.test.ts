/**
 * Notation JWS envelopes as referrers, built in the test with a test CA,
 * verified against trust stores of X.509 roots; every bad case refused with
 * its own reason.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createTrust } from "../../src/trust/index.js";
import { artifactOf } from "./helpers/artifacts.js";
import { blobOf } from "./helpers/cosign.js";
import { envelope, issue, notationManifest, type Issued } from "./helpers/notation.js";

const image = blobOf(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json" }));
const TARGET = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: image.digest, size: image.bytes.length };
const OTHER = { ...TARGET, digest: blobOf("another").digest };

describe("notation signatures", () => {
  let root: Issued, inter: Issued, leaf: Issued, rsaRoot: Issued, rsaLeaf: Issued, strangerRoot: Issued, strangerLeaf: Issued;
  beforeAll(async () => {
    root = await issue("CN=release root", undefined, { ca: true });
    inter = await issue("CN=release intermediate", root, { ca: true, alg: "ES384" });
    leaf = await issue("CN=release signer", inter, { ca: false });
    rsaRoot = await issue("CN=rsa root", undefined, { ca: true, alg: "PS256" });
    rsaLeaf = await issue("CN=rsa signer", rsaRoot, { ca: false, alg: "PS256" });
    strangerRoot = await issue("CN=stranger root", undefined, { ca: true });
    strangerLeaf = await issue("CN=release signer", strangerRoot, { ca: false });
  });

  const trust = () => createTrust({ notation: { release: [root.cert.toString("pem")], rsa: [rsaRoot.cert.toString("pem")] } });
  const verify = async (env: Buffer, digest = TARGET.digest) => trust().verifySignatures({ digest, signatures: [artifactOf(notationManifest(env, TARGET))] });

  it("accepts ES256 through an ES384 intermediate, and PS256, naming the trust store", async () => {
    expect(await verify(await envelope([leaf, inter], TARGET))).toEqual([{ ok: true, kind: "notation", by: "release", artifact: 0, layer: 0 }]);
    expect(await verify(await envelope([rsaLeaf, rsaRoot], TARGET))).toMatchObject([{ ok: true, by: "rsa" }]);
    // the chain may stop below the root the store holds
    expect(await verify(await envelope([rsaLeaf], TARGET))).toMatchObject([{ ok: true, by: "rsa" }]);
  });

  it("refuses each bad case with its own reason", async () => {
    const expiredLeaf = await issue("CN=old signer", inter, { ca: false, notBefore: new Date(Date.now() - 7 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
    const serverCert = await issue("CN=a web server", inter, { ca: false, extendedUsage: "1.3.6.1.5.5.7.3.1" });
    const cases: Record<string, Promise<Buffer>> = {
      "not for code signing": envelope([serverCert, inter], TARGET),
      "a CA as signer": envelope([inter, root], TARGET),
      "digest-mismatch": envelope([leaf, inter], OTHER),
      "wrong-key": envelope([leaf, inter], TARGET, { signingKey: strangerLeaf.keys.privateKey }),
      "bad-signature": envelope([leaf, inter], TARGET, { mangle: (s) => s.subarray(0, 40) }),
      "untrusted-chain": envelope([strangerLeaf, strangerRoot], TARGET),
      "broken chain": envelope([leaf, rsaRoot], TARGET),
      "expired-certificate": envelope([expiredLeaf, inter], TARGET),
      "expired-signature": envelope([leaf, inter], TARGET, { header: { "io.cncf.notary.expiry": new Date(Date.now() - 1000).toISOString() } }),
      "no x5c": envelope([leaf, inter], TARGET, { x5c: [] }),
      "long x5c": envelope([leaf, inter], TARGET, { x5c: Array.from({ length: 9 }, () => Buffer.from(leaf.cert.rawData).toString("base64")) }),
      "unknown alg": envelope([leaf, inter], TARGET, { header: { alg: "EdDSA" } }),
      "other scheme": envelope([leaf, inter], TARGET, { header: { "io.cncf.notary.signingScheme": "notary.x509.signingAuthority" } }),
    };
    const verdicts: Record<string, string> = {};
    for (const [name, env] of Object.entries(cases)) {
      const [v] = await verify(await env);
      verdicts[name] = v!.ok ? "ok" : v!.reason;
    }
    expect(verdicts).toEqual({
      "not for code signing": "untrusted-chain",
      "a CA as signer": "untrusted-chain",
      "digest-mismatch": "digest-mismatch",
      "wrong-key": "wrong-key",
      "bad-signature": "bad-signature",
      "untrusted-chain": "untrusted-chain",
      "broken chain": "untrusted-chain",
      "expired-certificate": "expired-certificate",
      "expired-signature": "expired-signature",
      "no x5c": "malformed",
      "long x5c": "malformed",
      "unknown alg": "unsupported",
      "other scheme": "unsupported",
    });
  });

  it("checks certificates at the configured clock, and refuses without a trust store", async () => {
    const env = await envelope([leaf, inter], TARGET);
    const later = createTrust({ notation: { release: [root.cert.toString("pem")] }, now: () => new Date(Date.now() + 30 * 86_400_000) });
    const [v] = await later.verifySignatures({ digest: TARGET.digest, signatures: [artifactOf(notationManifest(env, TARGET))] });
    expect(v).toMatchObject({ ok: false, reason: "expired-certificate", detail: expect.stringContaining("CN=release signer") });
    const [none] = await createTrust({ keys: {} }).verifySignatures({ digest: TARGET.digest, signatures: [artifactOf(notationManifest(env, TARGET))] });
    expect(none).toMatchObject({ ok: false, kind: "notation", reason: "not-configured" });
    expect(() => createTrust({ notation: { empty: ["no pem here"] } })).toThrow(/notation trust store "empty": no PEM CERTIFICATE/);
  });
});
