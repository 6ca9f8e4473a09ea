/**
 * cosign's key-based signing, made here the way cosign and containers/image
 * 5.23 do it (Debian's skopeo and podman are built without sigstore): an
 * `ENCRYPTED COSIGN PRIVATE KEY` PEM (scrypt N=32768, r=8, p=1 over the
 * password, nacl secretbox around the PKCS#8 key, securesystemslib's JSON),
 * the simple-signing payload containers/image marshals, an ASN.1 signature
 * over SHA-256 of its bytes, and the `.sig` manifest. Independent of
 * src/trust: node:crypto and tweetnacl only.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, scryptSync, sign, type KeyObject } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nacl from "tweetnacl";

export type KeyType = "P-256" | "P-384" | "Ed25519" | "RSA";

const SCRYPT = { N: 32768, r: 8, p: 1 } as const;
const ENCRYPTED_LABEL = "ENCRYPTED COSIGN PRIVATE KEY";

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN ${label}-----\n${lines}\n-----END ${label}-----\n`;
}

function scryptKey(password: string, salt: Buffer): Buffer {
  return scryptSync(Buffer.from(password, "utf8"), salt, 32, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: 64 * 1024 * 1024 });
}

/** A new key pair as `cosign generate-key-pair` writes it: the encrypted private key and the `PUBLIC KEY` PEM. */
export function generateCosignKey(password: string, type: KeyType = "P-256"): { privatePem: string; publicPem: string } {
  const pair =
    type === "RSA"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : type === "Ed25519"
        ? generateKeyPairSync("ed25519")
        : generateKeyPairSync("ec", { namedCurve: type === "P-256" ? "prime256v1" : "secp384r1" });
  return { privatePem: encryptCosignKey(pair.privateKey, password), publicPem: pair.publicKey.export({ type: "spki", format: "pem" }) as string };
}

/** The private key sealed as cosign seals it (Go's json.Marshal of securesystemslib's struct: []byte as base64). */
export function encryptCosignKey(key: KeyObject, password: string): string {
  const salt = randomBytes(32);
  const nonce = randomBytes(24);
  const pkcs8 = key.export({ type: "pkcs8", format: "der" });
  const sealed = nacl.secretbox(pkcs8, nonce, scryptKey(password, salt));
  const json = JSON.stringify({
    kdf: { name: "scrypt", params: { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }, salt: salt.toString("base64") },
    cipher: { name: "nacl/secretbox", nonce: nonce.toString("base64") },
    ciphertext: Buffer.from(sealed).toString("base64"),
  });
  return pem(ENCRYPTED_LABEL, Buffer.from(json));
}

/** Opens an `ENCRYPTED COSIGN PRIVATE KEY` (or `ENCRYPTED SIGSTORE PRIVATE KEY`) with its password. */
export function decryptCosignKey(privatePem: string, password: string): KeyObject {
  const m = /-----BEGIN ENCRYPTED (?:COSIGN|SIGSTORE) PRIVATE KEY-----([^-]+)-----END/.exec(privatePem);
  if (!m) throw new Error("not an encrypted cosign private key");
  const data = JSON.parse(Buffer.from(m[1]!.replace(/\s+/g, ""), "base64").toString("utf8")) as {
    kdf: { name: string; params: { N: number; r: number; p: number }; salt: string };
    cipher: { name: string; nonce: string };
    ciphertext: string;
  };
  if (data.kdf.name !== "scrypt" || data.cipher.name !== "nacl/secretbox") throw new Error("unsupported cosign key encryption");
  const { N, r, p } = data.kdf.params;
  const key = scryptSync(Buffer.from(password, "utf8"), Buffer.from(data.kdf.salt, "base64"), 32, { N, r, p, maxmem: 64 * 1024 * 1024 });
  const opened = nacl.secretbox.open(Buffer.from(data.ciphertext, "base64"), Buffer.from(data.cipher.nonce, "base64"), key);
  if (!opened) throw new Error("wrong password for the cosign key");
  return createPrivateKey({ key: Buffer.from(opened), format: "der", type: "pkcs8" });
}

/**
 * The simple-signing payload as containers/image 5.23 marshals it
 * (`UntrustedSigstorePayload.MarshalJSON`: Go maps, so keys sorted).
 */
export function simpleSigningPayload(dockerReference: string, digest: string, timestamp = 1764316800): Buffer {
  const critical = { identity: { "docker-reference": dockerReference }, image: { "docker-manifest-digest": digest }, type: "cosign container image signature" };
  return Buffer.from(JSON.stringify({ critical, optional: { creator: "containers/image 5.23.1", timestamp } }));
}

/** sigstore's `SignMessage` with `crypto.SHA256`: ECDSA ASN.1 (DER), RSA PKCS#1 v1.5, Ed25519 over the bytes themselves. */
export function signBytes(key: KeyObject, data: Buffer): Buffer {
  return sign(key.asymmetricKeyType === "ed25519" ? null : "sha256", data, key);
}

/** The public key of a private key, as PEM. */
export function publicPemOf(key: KeyObject): string {
  return createPublicKey(key).export({ type: "spki", format: "pem" }) as string;
}

export interface Blob {
  digest: string;
  bytes: Buffer;
}

export function blobOf(bytes: Buffer | string): Blob {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
  return { digest: `sha256:${createHash("sha256").update(b).digest("hex")}`, bytes: b };
}

/** One signature layer: the payload and its base64 signature. */
export interface SignatureLayer {
  payload: Buffer;
  signature: string;
}

/**
 * The `sha256-<hex>.sig` manifest containers/image writes (an OCI image
 * manifest, a config whose diff_ids are the payloads' digests, one layer per
 * signature), with its blobs; `artifactType` makes it the OCI 1.1 referrer form cosign writes.
 */
export function signatureManifest(layers: SignatureLayer[], options: { subject?: { digest: string; size: number; mediaType: string }; artifactType?: string } = {}) {
  const payloads = layers.map((l) => blobOf(l.payload));
  const config = blobOf(JSON.stringify({ architecture: "", config: {}, created: "0001-01-01T00:00:00Z", history: null, os: "", rootfs: { type: "layers", diff_ids: payloads.map((p) => p.digest) } }));
  const manifest: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    ...(options.artifactType ? { artifactType: options.artifactType } : {}),
    config: { mediaType: "application/vnd.oci.image.config.v1+json", size: config.bytes.length, digest: config.digest },
    layers: layers.map((l, i) => ({
      mediaType: "application/vnd.dev.cosign.simplesigning.v1+json",
      size: l.payload.length,
      digest: payloads[i]!.digest,
      annotations: { "dev.cosignproject.cosign/signature": l.signature },
    })),
    ...(options.subject ? { subject: options.subject } : {}),
  };
  return { manifest: blobOf(JSON.stringify(manifest)), blobs: [config, ...payloads] };
}

/** Signs `digest` for `reference` with an encrypted cosign key: the `.sig` manifest and its blobs. */
export function cosignSign(privatePem: string, password: string, reference: string, digest: string) {
  const key = decryptCosignKey(privatePem, password);
  const payload = simpleSigningPayload(reference, digest);
  return signatureManifest([{ payload, signature: signBytes(key, payload).toString("base64") }]);
}

/** Writes a signature manifest and its blobs as an OCI image layout with the manifest under `tag`, for `skopeo copy oci:<dir>:<tag>`. */
export function writeSignatureLayout(dir: string, signed: { manifest: Blob; blobs: Blob[] }, tag: string): string {
  mkdirSync(join(dir, "blobs", "sha256"), { recursive: true });
  for (const blob of [signed.manifest, ...signed.blobs]) writeFileSync(join(dir, "blobs", "sha256", blob.digest.slice(7)), blob.bytes);
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  const entry = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: signed.manifest.digest, size: signed.manifest.bytes.length, annotations: { "org.opencontainers.image.ref.name": tag } };
  writeFileSync(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [entry] }));
  return `oci:${dir}:${tag}`;
}
