/**
 * Notation (Notary Project) signatures built in the test, as `notation sign`
 * writes them (no notation binary here): a test CA made with @peculiar/x509,
 * a JWS envelope in JSON serialization over the notary payload, and the
 * referrer manifest of artifactType `application/vnd.cncf.notary.signature`.
 */
import { x509 } from "../../../src/util/x509.js";
import { blobOf, type Blob } from "./cosign.js";

export interface Issued {
  cert: { rawData: ArrayBuffer; subject: string; toString(format: "pem"): string };
  keys: CryptoKeyPair;
  alg: "PS256" | "ES256" | "ES384";
}

const PARAMS = {
  PS256: { gen: { name: "RSA-PSS", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, sign: { name: "RSA-PSS", saltLength: 32 } },
  ES256: { gen: { name: "ECDSA", namedCurve: "P-256" }, sign: { name: "ECDSA", hash: "SHA-256" } },
  ES384: { gen: { name: "ECDSA", namedCurve: "P-384" }, sign: { name: "ECDSA", hash: "SHA-384" } },
} as const;

/** A certificate for `subject`, signed by `issuer` (or self-signed), valid from an hour ago to `notAfter`. */
export async function issue(
  subject: string,
  issuer: Issued | undefined,
  options: { ca: boolean; alg?: Issued["alg"]; notAfter?: Date; notBefore?: Date; extendedUsage?: string },
): Promise<Issued> {
  const X = await x509();
  const alg = options.alg ?? "ES256";
  const keys = (await crypto.subtle.generateKey(PARAMS[alg].gen, true, ["sign", "verify"])) as CryptoKeyPair;
  const signer = issuer ?? { keys, alg };
  const signingAlgorithm = signer.alg === "PS256" ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } : PARAMS[signer.alg].sign;
  const extensions = options.ca
    ? [new X.BasicConstraintsExtension(true, undefined, true), new X.KeyUsagesExtension(X.KeyUsageFlags.keyCertSign, true)]
    : [new X.KeyUsagesExtension(X.KeyUsageFlags.digitalSignature, true), new X.ExtendedKeyUsageExtension([options.extendedUsage ?? "1.3.6.1.5.5.7.3.3"], true)];
  // Certificates are signed with PKCS#1 v1.5 by an RSA-PSS key: import the same key for that algorithm.
  let signingKey = signer.keys.privateKey;
  if (signer.alg === "PS256") {
    const pkcs8 = await crypto.subtle.exportKey("pkcs8", signer.keys.privateKey);
    signingKey = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  }
  const cert = await X.X509CertificateGenerator.create({
    subject,
    issuer: issuer ? issuer.cert.subject : subject,
    notBefore: options.notBefore ?? new Date(Date.now() - 3_600_000),
    notAfter: options.notAfter ?? new Date(Date.now() + 86_400_000),
    publicKey: keys.publicKey,
    signingKey,
    signingAlgorithm,
    extensions,
  });
  return { cert, keys, alg };
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");

export interface EnvelopeOptions {
  /** Sign with this key instead of the leaf's (a wrong key). */
  signingKey?: CryptoKey;
  /** Extra protected-header fields (io.cncf.notary.expiry, another alg...). */
  header?: Record<string, unknown>;
  /** Change the signature bytes. */
  mangle?: (sig: Uint8Array) => Uint8Array;
  /** The x5c chain; the leaf and its issuers by default. */
  x5c?: string[];
}

/** A JWS envelope signed by `chain[0]` over a notary payload naming `target`. */
export async function envelope(chain: Issued[], target: { digest: string; size: number; mediaType: string }, options: EnvelopeOptions = {}): Promise<Buffer> {
  const leaf = chain[0]!;
  const header = {
    alg: leaf.alg,
    crit: ["io.cncf.notary.signingScheme"],
    cty: "application/vnd.cncf.notary.payload.v1+json",
    "io.cncf.notary.signingScheme": "notary.x509",
    "io.cncf.notary.signingTime": new Date().toISOString(),
    ...options.header,
  };
  const protectedB64 = b64url(JSON.stringify(header));
  const payloadB64 = b64url(JSON.stringify({ targetArtifact: target }));
  const sig = new Uint8Array(await crypto.subtle.sign(PARAMS[leaf.alg].sign, options.signingKey ?? leaf.keys.privateKey, Buffer.from(`${protectedB64}.${payloadB64}`)));
  return Buffer.from(
    JSON.stringify({
      payload: payloadB64,
      protected: protectedB64,
      header: { x5c: options.x5c ?? chain.map((c) => Buffer.from(c.cert.rawData).toString("base64")), "io.cncf.notary.signingAgent": "registry-kit-test/1" },
      signature: b64url(options.mangle ? options.mangle(sig) : sig),
    }),
  );
}

/** The referrer manifest `notation sign` pushes for `subject`, and its blobs. */
export function notationManifest(env: Buffer, subject: { digest: string; size: number; mediaType: string }): { manifest: Blob; blobs: Blob[] } {
  const layer = blobOf(env);
  const empty = blobOf("{}");
  const manifest = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    artifactType: "application/vnd.cncf.notary.signature",
    config: { mediaType: "application/vnd.oci.empty.v1+json", digest: empty.digest, size: 2 },
    layers: [{ mediaType: "application/jose+json", digest: layer.digest, size: layer.bytes.length }],
    subject,
    annotations: { "io.cncf.notary.x509chain.thumbprint#S256": "[]" },
  };
  return { manifest: blobOf(JSON.stringify(manifest)), blobs: [layer, empty] };
}
