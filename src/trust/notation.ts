/**
 * Notation (Notary Project) signatures: an OCI referrer of artifactType
 * `application/vnd.cncf.notary.signature` whose layer is a JWS envelope
 * (`application/jose+json`, JSON serialization) signed by the leaf of its
 * `x5c` chain, which must lead to a root of a configured trust store.
 *
 * @module
 */
import { asciiBytes, equalBytes, fromB64url, fromUtf8 } from "../util/bytes.js";
import { x509, type X509 } from "../util/x509.js";
import { certificate, isSignedBy } from "./certificates.js";
import { parseJson, readBlob, type Descriptor } from "./artifact.js";
import { base64 } from "./cosign.js";
import { PublicKey, pemBlocks, type HashName, type RsaScheme } from "./keys.js";
import { refuse } from "./refusal.js";
import type { SignatureArtifact } from "./types.js";

/** The artifactType of a notation signature manifest. */
export const NOTATION_ARTIFACT = "application/vnd.cncf.notary.signature";
/** The media type of a JWS envelope layer. */
export const NOTATION_ENVELOPE = "application/jose+json";
const PAYLOAD_TYPE = "application/vnd.cncf.notary.payload.v1+json";
/** Certificates an x5c chain may hold: each is parsed and checked. */
const MAX_CHAIN = 8;

/** A named list of trusted root certificates (DER). */
export interface TrustStore {
  name: string;
  roots: Uint8Array[];
}

/** The trust stores from their PEM roots; throws naming a store without any certificate. */
export function loadTrustStores(config: Readonly<Record<string, readonly string[]>>): TrustStore[] {
  return Object.entries(config).map(([name, pems]) => {
    const roots = pems.flatMap((pem) => pemBlocks(pem, "CERTIFICATE"));
    if (roots.length === 0) throw new Error(`notation trust store "${name}": no PEM CERTIFICATE`);
    return { name, roots };
  });
}

const ALGORITHMS: Record<string, { hash: HashName; kind: PublicKey["kind"]; rsa?: RsaScheme }> = {
  PS256: { hash: "SHA-256", kind: "RSA", rsa: "RSA-PSS" },
  PS384: { hash: "SHA-384", kind: "RSA", rsa: "RSA-PSS" },
  PS512: { hash: "SHA-512", kind: "RSA", rsa: "RSA-PSS" },
  ES256: { hash: "SHA-256", kind: "P-256" },
  ES384: { hash: "SHA-384", kind: "P-384" },
};

interface Envelope {
  payload: string;
  protected: string;
  signature: string;
  header?: { x5c?: unknown };
}

interface ProtectedHeader {
  alg?: string;
  cty?: string;
  crit?: unknown;
  "io.cncf.notary.signingScheme"?: string;
  "io.cncf.notary.expiry"?: string;
}

function decodeJson(b64u: string, what: string): unknown {
  try {
    return JSON.parse(fromUtf8(fromB64url(b64u))) as unknown;
  } catch {
    return refuse("malformed", `the envelope's ${what} is not base64url JSON`);
  }
}

function readEnvelope(bytes: Uint8Array): { env: Envelope; header: ProtectedHeader; chain: Uint8Array[] } {
  const env = parseJson(bytes, "notation envelope") as Envelope;
  if (typeof env !== "object" || env === null || typeof env.payload !== "string" || typeof env.protected !== "string" || typeof env.signature !== "string") {
    return refuse("malformed", "the notation envelope lacks payload, protected or signature");
  }
  const header = decodeJson(env.protected, "protected header") as ProtectedHeader;
  if (header.cty !== PAYLOAD_TYPE) refuse("malformed", `the envelope's cty is not ${PAYLOAD_TYPE}`);
  if (!Array.isArray(header.crit) || !header.crit.includes("io.cncf.notary.signingScheme")) refuse("malformed", "the envelope's crit does not name io.cncf.notary.signingScheme");
  if (header["io.cncf.notary.signingScheme"] !== "notary.x509") refuse("unsupported", `signing scheme ${String(header["io.cncf.notary.signingScheme"])} (notary.x509 is verified)`);
  const x5c = env.header?.x5c;
  if (!Array.isArray(x5c) || x5c.length === 0) return refuse("malformed", "the envelope has no x5c certificate chain");
  if (x5c.length > MAX_CHAIN) return refuse("malformed", `the x5c chain has ${x5c.length} certificates, more than ${MAX_CHAIN}`);
  const chain = x5c.map((c) => base64(c) ?? refuse("malformed", "an x5c certificate is not base64"));
  return { env, header, chain };
}

/** The certificate's key, or an `unsupported` refusal for a kind registry-kit does not verify with. */
export function keyOf(spki: Uint8Array): PublicKey {
  try {
    return new PublicKey(spki);
  } catch (err) {
    return refuse("unsupported", `the signing certificate's key: ${(err as Error).message}`);
  }
}

async function checkSignature(env: Envelope, header: ProtectedHeader, leafSpki: Uint8Array): Promise<void> {
  const alg = ALGORITHMS[header.alg ?? ""];
  if (!alg) return refuse("unsupported", `JWS algorithm ${String(header.alg)}`);
  let sig: Uint8Array;
  try {
    sig = fromB64url(env.signature);
  } catch {
    return refuse("bad-signature", "the envelope's signature is not base64url");
  }
  const key = keyOf(leafSpki);
  if (key.kind !== alg.kind) refuse("wrong-key", `the signing certificate's ${key.kind} key cannot make ${header.alg} signatures`);
  const result = await key.verify(sig, asciiBytes(`${env.protected}.${env.payload}`), [alg.hash], alg.rsa);
  if (result === "malformed") refuse("bad-signature", "the envelope's signature is truncated or garbled");
  if (result === "no") refuse("wrong-key", "the signature does not verify with the signing certificate's key");
}

/**
 * The chain `certs` (leaf first) checked: each signed by the next, the last
 * one a root of a store or signed by one, every certificate valid at `now`.
 * Returns the store's name.
 */
async function checkChain(certs: Uint8Array[], stores: readonly TrustStore[], now: Date): Promise<string> {
  let chain: X509.X509Certificate[];
  try {
    chain = await Promise.all(certs.map((der) => certificate(der)));
  } catch {
    return refuse("malformed", "an x5c certificate is not X.509 DER");
  }
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!(await isSignedBy(chain[i]!, chain[i + 1]!))) return refuse("untrusted-chain", `certificate ${i} of x5c is not signed by certificate ${i + 1}`);
  }
  const top = chain[chain.length - 1]!;
  const store = await findStore(top, certs[certs.length - 1]!, stores);
  if (!store) return refuse("untrusted-chain", `the chain ends at "${top.subject}", which no configured trust store holds or signed`);
  for (const cert of chain) {
    if (now < cert.notBefore || now > cert.notAfter) {
      return refuse("expired-certificate", `certificate "${cert.subject}" is valid from ${cert.notBefore.toISOString()} to ${cert.notAfter.toISOString()}`);
    }
  }
  return store;
}

async function findStore(top: X509.X509Certificate, topDer: Uint8Array, stores: readonly TrustStore[]): Promise<string | undefined> {
  for (const store of stores) {
    for (const der of store.roots) {
      if (equalBytes(der, topDer)) return store.name;
      if (await isSignedBy(top, await certificate(der))) return store.name;
    }
  }
  return undefined;
}

const CODE_SIGNING = "1.3.6.1.5.5.7.3.3";

/** The leaf may sign code, as notation requires: not a CA, digitalSignature if key usage is given, codeSigning if extended key usage is. */
async function checkSigningUse(leaf: X509.X509Certificate): Promise<void> {
  const X = await x509();
  const basic = leaf.getExtension(X.BasicConstraintsExtension);
  const usage = leaf.getExtension(X.KeyUsagesExtension);
  const extended = leaf.getExtension(X.ExtendedKeyUsageExtension);
  if (basic?.ca) refuse("untrusted-chain", "the signing certificate is a CA certificate");
  if (usage && !(usage.usages & X.KeyUsageFlags.digitalSignature)) refuse("untrusted-chain", "the signing certificate's key usage lacks digitalSignature");
  if (extended && !extended.usages.map(String).includes(CODE_SIGNING)) refuse("untrusted-chain", "the signing certificate's extended key usage lacks codeSigning");
}

/** Verifies one notation envelope layer for `digest`; returns the trust store's name. */
export async function verifyNotation(artifact: SignatureArtifact, layer: Descriptor, digest: string, stores: readonly TrustStore[], now: Date): Promise<string> {
  if (stores.length === 0) return refuse("not-configured", "no notation trust store is configured");
  const { env, header, chain } = readEnvelope(await readBlob(artifact, layer));
  let leafSpki: Uint8Array;
  try {
    leafSpki = new Uint8Array((await certificate(chain[0]!)).publicKey.rawData);
  } catch {
    return refuse("malformed", "the signing certificate is not X.509 DER");
  }
  await checkSignature(env, header, leafSpki);
  await checkSigningUse(await certificate(chain[0]!));
  const store = await checkChain(chain, stores, now);
  const expiry = header["io.cncf.notary.expiry"];
  if (expiry !== undefined && !(now.getTime() <= Date.parse(expiry))) refuse("expired-signature", `the signature expired at ${expiry}`);
  const payload = decodeJson(env.payload, "payload") as { targetArtifact?: { digest?: unknown } };
  const claimed = payload?.targetArtifact?.digest;
  if (typeof claimed !== "string") return refuse("malformed", "the payload has no targetArtifact.digest");
  if (claimed !== digest) return refuse("digest-mismatch", `the signature is for ${claimed}, not ${digest}`);
  return store;
}
