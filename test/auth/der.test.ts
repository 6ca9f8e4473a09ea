/**
 * certificateSpki: the SubjectPublicKeyInfo of a certificate read without the
 * X.509 library (what start-up uses), checked against node:crypto's own parser.
 */
import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AuthError, generateSigningKeyPem, parseCertBundle } from "../../src/auth/index.js";
import { certificateSpki } from "../../src/auth/keys/der.js";
import { parsePem } from "../../src/auth/keys/pem.js";

describe("auth/der certificateSpki", () => {
  for (const alg of ["RS256", "ES256", "ES384", "EdDSA"] as const) {
    it(`finds the same SubjectPublicKeyInfo as node:crypto in a ${alg} certificate`, async () => {
      const { certificate } = await generateSigningKeyPem({ alg });
      const der = parsePem(certificate)[0]!.der;
      const expected = new X509Certificate(certificate).publicKey.export({ type: "spki", format: "der" });
      expect(Buffer.from(certificateSpki(der))).toEqual(expected);
    });
  }

  it("refuses what is not a certificate with an AuthError, also a truncated one", async () => {
    const { certificate } = await generateSigningKeyPem({ alg: "ES256" });
    const der = parsePem(certificate)[0]!.der;
    const spki = certificateSpki(der);
    for (const bad of [spki, der.subarray(0, der.length - 10), new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x00]), new Uint8Array(0)]) {
      expect(() => certificateSpki(bad)).toThrow(AuthError);
    }
  });

  it("a bundle keeps each certificate's DER as an x5c anchor and its key by kid", async () => {
    const a = await generateSigningKeyPem({ alg: "ES256" });
    const b = await generateSigningKeyPem({ alg: "RS256" });
    const store = await parseCertBundle(a.certificate + b.certificate);
    expect(store.certificatesDer.map((d) => Buffer.from(d).toString("base64"))).toEqual(
      [a.certificate, b.certificate].map((pem) => Buffer.from(parsePem(pem)[0]!.der).toString("base64")),
    );
    expect(store.keys.map((k) => k.kind.kty)).toEqual(["EC", "RSA"]);
  });
});
