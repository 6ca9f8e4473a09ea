import { createPrivateKey } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { b64 } from "../../src/util/bytes.js";
import {
  createTokenVerifier,
  cryptoKeys,
  decodeJwt,
  generateSigningKeyPem,
  generatedKeys,
  hmacKeys,
  parseCertBundle,
  pemKeys,
  signJwt,
  VerificationKey,
  type JwsAlgorithm,
  type KeyProvider,
} from "../../src/auth/index.js";
import { verifyX5c } from "../../src/auth/trust/cert-bundle.js";
import { toPem } from "../../src/auth/keys/pem.js";
import { loadTrustStore, pemKeysFromFiles } from "../../src/auth/keys/keys.node.js";
import { x509 } from "../../src/auth/trust/x509.js";
import { ISSUER, SERVICE, claims, signer, type Signer } from "./helpers.js";

const verifierFor = (keys: KeyProvider, algorithms?: JwsAlgorithm[], extra: Record<string, unknown> = {}) =>
  createTokenVerifier({ issuer: ISSUER, audience: SERVICE, keys, ...(algorithms ? { algorithms } : {}), ...extra });

async function rsaPair(bits: number, hash = "SHA-256", name = "RSASSA-PKCS1-v1_5") {
  return (await crypto.subtle.generateKey(
    { name, modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
}

let rsa: Signer;
beforeAll(async () => {
  rsa = await signer("keys-rsa");
});

describe("every algorithm signs and verifies", () => {
  const cases: [JwsAlgorithm, () => Promise<KeyProvider>][] = [
    ["RS256", async () => rsa.keys],
    ["RS384", async () => { const k = await rsaPair(2048, "SHA-384"); return cryptoKeys({ privateKey: k.privateKey, publicKey: k.publicKey, alg: "RS384" }); }],
    ["RS512", async () => { const k = await rsaPair(2048, "SHA-512"); return cryptoKeys({ privateKey: k.privateKey, publicKey: k.publicKey, alg: "RS512" }); }],
    ["PS256", async () => generatedKeys({ alg: "PS256" })],
    ["ES256", async () => generatedKeys({ alg: "ES256" })],
    ["ES384", async () => generatedKeys({ alg: "ES384" })],
    ["ES512", async () => generatedKeys({ alg: "ES512" })],
    ["EdDSA", async () => generatedKeys({ alg: "EdDSA" })],
  ];
  for (const [alg, make] of cases) {
    it(alg, async () => {
      const keys = await make();
      const sk = await keys.signingKey();
      expect(sk.alg).toBe(alg);
      const token = await signJwt(claims(), sk);
      expect(decodeJwt(token).header.alg).toBe(alg);
      const v = await verifierFor(keys, [alg]).verify(token);
      expect(v.subject).toBe("alice");
      const isDefault = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512"].includes(alg);
      if (isDefault) await expect(verifierFor(keys).verify(token)).resolves.toBeDefined();
      else await expect(verifierFor(keys).verify(token)).rejects.toThrow(/not allowed/);
    });
  }

  it("ES256 token with the kid of an ES384 key is refused (curve must match)", async () => {
    const k256 = generatedKeys({ alg: "ES256" });
    const k384 = generatedKeys({ alg: "ES384" });
    const [vk384] = await k384.verificationKeys();
    const token = await signJwt(claims(), { ...(await k256.signingKey()), kid: vk384!.kid }, { x5c: false });
    await expect(verifierFor(k384).verify(token)).rejects.toThrow(/cannot verify ES256/);
  });

  it("HS256 only with a configured secret", async () => {
    const secret = "a-shared-secret-of-at-least-32-bytes!";
    const keys = hmacKeys({ secret });
    const token = await signJwt(claims(), await keys.signingKey());
    const ok = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, hmacSecret: secret });
    expect((await ok.verify(token)).subject).toBe("alice");
    // Listing HS256 without a secret does not enable it.
    await expect(verifierFor(rsa.keys, ["RS256", "HS256"]).verify(token)).rejects.toThrow(/not allowed/);
    const wrong = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, hmacSecret: "another-shared-secret-of-32-bytes!!" });
    await expect(wrong.verify(token)).rejects.toThrow(/signature/);
    expect(() => hmacKeys({ secret: "short" })).toThrow(/32 bytes/);
    expect(() => hmacKeys({ secret: rsa.pem.certificate })).toThrow(/PEM/);
  });

  it("the allow-list refuses none and unknown names", () => {
    expect(() => verifierFor(rsa.keys, ["none" as JwsAlgorithm])).toThrow(/unsupported/);
    expect(() => verifierFor(rsa.keys, ["HS512" as JwsAlgorithm])).toThrow(/unsupported/);
  });
});

describe("RSA keys under 2048 bits are refused", () => {
  it("as a public key, as a signing key, in a bundle", async () => {
    const small = await rsaPair(1024);
    await expect(VerificationKey.fromCryptoKey(small.publicKey)).rejects.toThrow(/1024 bits refused/);
    await expect(cryptoKeys({ privateKey: small.privateKey, publicKey: small.publicKey }).signingKey()).rejects.toThrow(/1024/);
    const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", small.privateKey));
    await expect(pemKeys({ privateKey: toPem("PRIVATE KEY", pkcs8) }).signingKey()).rejects.toThrow(/1024/);
    const { X509CertificateGenerator } = await x509();
    const cert = await X509CertificateGenerator.createSelfSigned({ name: "CN=small", keys: small, signingAlgorithm: { name: "RSASSA-PKCS1-v1_5" } });
    await expect(parseCertBundle(cert.toString("pem"))).rejects.toThrow(/1024/);
  });
});

describe("PEM key provider", () => {
  it("PKCS#8, PKCS#1 and SEC1 private keys give the same key id", async () => {
    const pkcs1 = createPrivateKey(rsa.pem.privateKey).export({ type: "pkcs1", format: "pem" }) as string;
    const fromPkcs1 = pemKeys({ privateKey: pkcs1, certificate: rsa.pem.certificate });
    expect((await fromPkcs1.signingKey()).kid).toBe(rsa.vk.kid);
    const ec = await signer("keys-ec", "ES256");
    const sec1 = createPrivateKey(ec.pem.privateKey).export({ type: "sec1", format: "pem" }) as string;
    const fromSec1 = pemKeys({ privateKey: sec1 });
    expect((await fromSec1.signingKey()).kid).toBe(ec.vk.kid);
    expect((await fromSec1.signingKey()).alg).toBe("ES256");
  });

  it("refuses a certificate of another key, encrypted keys and text without a key", async () => {
    const other = await signer("keys-other");
    await expect(pemKeys({ privateKey: rsa.pem.privateKey, certificate: other.pem.certificate }).signingKey()).rejects.toThrow(/does not match/);
    await expect(pemKeys({ privateKey: "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n" }).signingKey()).rejects.toThrow(/encrypted/);
    await expect(pemKeys({ privateKey: "nothing here" }).signingKey()).rejects.toThrow(/no PRIVATE KEY/);
    await expect(pemKeys({ privateKey: rsa.pem.privateKey, alg: "ES256" }).signingKey()).rejects.toThrow(/does not fit/);
  });

  it("rotation: additional trusted keys verify, the signer signs", async () => {
    const old = await signer("keys-old");
    const keys = pemKeys({ ...rsa.pem, additionalTrusted: old.pem.certificate });
    const vks = await keys.verificationKeys();
    expect(vks.map((k) => k.kid)).toEqual([rsa.vk.kid, old.vk.kid]);
    const v = verifierFor(keys);
    await v.verify(await signJwt(claims(), await old.keys.signingKey(), { x5c: false }));
    await v.verify(await signJwt(claims(), await keys.signingKey()));
  });

  it("generateSigningKeyPem round-trips through pemKeys; files load with keys.node", async () => {
    const pem = await generateSigningKeyPem({ alg: "ES256", subject: "CN=test" });
    expect(pem.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(pem.certificate).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    const dir = await mkdtemp(join(tmpdir(), "rk-keys-"));
    await writeFile(join(dir, "key.pem"), pem.privateKey);
    await writeFile(join(dir, "cert.pem"), pem.certificate);
    const keys = await pemKeysFromFiles({ privateKey: join(dir, "key.pem"), certificate: join(dir, "cert.pem") });
    const store = await loadTrustStore(join(dir, "cert.pem"));
    const sk = await keys.signingKey();
    expect(store.byKid.has(sk.kid!)).toBe(true);
    expect(sk.x5c).toHaveLength(1);
  });
});

describe("x5c chains", () => {
  let root: { cert: any; keys: CryptoKeyPair };
  let inter: { cert: any; keys: CryptoKeyPair };
  const alg = { name: "ECDSA", namedCurve: "P-256" };
  const sign = { name: "ECDSA", hash: "SHA-256" };

  async function issue(subject: string, issuer: { cert: any; keys: CryptoKeyPair }, ca: boolean, notAfter = new Date(Date.now() + 86_400_000)) {
    const lib = await x509();
    const keys = (await crypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
    const cert = await lib.X509CertificateGenerator.create({
      subject,
      issuer: issuer.cert.subject,
      notBefore: new Date(Date.now() - 3_600_000),
      notAfter,
      publicKey: keys.publicKey,
      signingKey: issuer.keys.privateKey,
      signingAlgorithm: sign,
      extensions: ca ? [new lib.BasicConstraintsExtension(true, undefined, true)] : [],
    });
    return { cert, keys };
  }

  beforeAll(async () => {
    const lib = await x509();
    const keys = (await crypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
    const cert = await lib.X509CertificateGenerator.createSelfSigned({
      name: "CN=root",
      keys,
      signingAlgorithm: sign,
      extensions: [new lib.BasicConstraintsExtension(true, undefined, true)],
    });
    root = { cert, keys };
    inter = await issue("CN=intermediate", root, true);
  });

  const der = (c: any) => b64(new Uint8Array(c.rawData));

  it("leaf → intermediate → bundle root is accepted; the leaf key verifies the token", async () => {
    const leaf = await issue("CN=leaf", inter, false);
    const store = await parseCertBundle(root.cert.toString("pem"));
    const vk = await verifyX5c(store, [der(leaf.cert), der(inter.cert)], new Date());
    expect(vk.kid).toBe((await VerificationKey.fromCryptoKey(leaf.keys.publicKey)).kid);
    const token = await signJwt(claims(), { alg: "ES256", key: leaf.keys.privateKey, x5c: [der(leaf.cert), der(inter.cert)] });
    const v = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, rootCertBundle: root.cert.toString("pem") });
    expect((await v.verify(token)).subject).toBe("alice");
  });

  it("refuses a missing intermediate, an expired leaf, a non-CA issuer", async () => {
    const store = await parseCertBundle(root.cert.toString("pem"));
    const leaf = await issue("CN=leaf", inter, false);
    await expect(verifyX5c(store, [der(leaf.cert)], new Date())).rejects.toThrow(/unknown authority/);
    const expired = await issue("CN=old", root, false, new Date(Date.now() - 60_000));
    await expect(verifyX5c(store, [der(expired.cert)], new Date())).rejects.toThrow(/expired/);
    const notCa = await issue("CN=not-ca", root, false);
    const under = await issue("CN=under", notCa, false);
    await expect(verifyX5c(store, [der(under.cert), der(notCa.cert)], new Date())).rejects.toThrow(/unknown authority/);
    await expect(verifyX5c(store, ["!!!"], new Date())).rejects.toThrow(/malformed/);
    await expect(verifyX5c(store, "x", new Date())).rejects.toThrow(/malformed/);
  });
});
