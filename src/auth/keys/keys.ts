/**
 * Key providers: where the token service gets its signing key (with its
 * certificate chain) and where verifiers get the keys they trust. Three
 * implementations: PEM text ({@link pemKeys}), keys generated in memory with a
 * self-signed certificate ({@link generatedKeys}, {@link generateSigningKeyPem}),
 * and plain `CryptoKey`s ({@link cryptoKeys}). Reading PEM files from disk is
 * in `keys.node.ts`.
 *
 * @module
 */
import { AuthError } from "../errors.js";
import { algorithmSpec, MIN_RSA_BITS, type JwsAlgorithm } from "../jwt/algorithms.js";
import { rememberKeyMaterial } from "./key-material.js";
import { certificateSpki, pkcs1ToPkcs8, pkcs8Kind, sec1ToPkcs8, type KeyKind } from "./der.js";
import { b64, toArrayBuffer, utf8 } from "../../util/bytes.js";
import type { SigningKey } from "../jwt/jwt.js";
import { parsePem, toPem } from "./pem.js";
import { publicJwk, VerificationKey } from "../trust/public-key.js";
import { x509 } from "../trust/x509.js";

export type { SigningKey } from "../jwt/jwt.js";
export { VerificationKey } from "../trust/public-key.js";

/**
 * The contract every key source implements (docs/architecture.md rule 6).
 *
 * - `signingKey()` gives the key the token service signs with, with its
 *   `kid` and certificate chain (`x5c`) when it has one.
 * - `verificationKeys()` gives every public key a verifier should trust, the
 *   signer's own first; list several for key rotation.
 *
 * Both may be called on every token; implementations cache their work.
 */
export interface KeyProvider {
  /** The key the token service signs with, with its `kid` and (when it has a certificate) `x5c` chain. */
  signingKey(): Promise<SigningKey>;
  /** Every public key a verifier should trust, the signer's own first. */
  verificationKeys(): Promise<readonly VerificationKey[]>;
}

/** The algorithm a key of this kind signs with unless told otherwise. */
export function defaultAlgorithm(kind: KeyKind): JwsAlgorithm {
  switch (kind.kty) {
    case "RSA":
      return "RS256";
    case "EC":
      return kind.crv === "P-256" ? "ES256" : kind.crv === "P-384" ? "ES384" : "ES512";
    case "OKP":
      return "EdDSA";
  }
}

function checkAlgFitsKind(alg: JwsAlgorithm, kind: KeyKind): void {
  const spec = algorithmSpec(alg);
  if (!spec || spec.family === "oct") throw new AuthError("invalid_key", `algorithm ${alg} cannot be used with an asymmetric key`);
  if (spec.family !== kind.kty || (kind.kty !== "RSA" && spec.crv !== kind.crv)) {
    throw new AuthError("invalid_key", `algorithm ${alg} does not fit a ${kind.kty}${"crv" in kind ? ` ${kind.crv}` : ""} key`);
  }
}

/** Import a PKCS#8 private key for `alg` and derive its public key. */
async function importPrivate(pkcs8: Uint8Array, alg: JwsAlgorithm | undefined) {
  const kind = pkcs8Kind(pkcs8);
  const a = alg ?? defaultAlgorithm(kind);
  checkAlgFitsKind(a, kind);
  const spec = algorithmSpec(a)!;
  // Import once extractable to read the public half, then keep a non-extractable signing key.
  const probe = await crypto.subtle.importKey("pkcs8", toArrayBuffer(pkcs8), spec.importParams, true, ["sign"]);
  const pub = publicJwk(await crypto.subtle.exportKey("jwk", probe));
  const key = await crypto.subtle.importKey("pkcs8", toArrayBuffer(pkcs8), spec.importParams, false, ["sign"]);
  rememberKeyMaterial(key, { format: "pkcs8", der: pkcs8 });
  const verifyParams = spec.importParams;
  const publicKey = await crypto.subtle.importKey("jwk", pub, verifyParams, true, ["verify"]);
  return { alg: a, key, publicKey };
}

/** A private key PEM block as PKCS#8 DER (PKCS#1 and SEC1 forms are converted). */
function privateKeyDer(pem: string): Uint8Array {
  const blocks = parsePem(pem);
  for (const b of blocks) {
    if (b.label === "PRIVATE KEY") return b.der;
    if (b.label === "RSA PRIVATE KEY") return pkcs1ToPkcs8(b.der);
    if (b.label === "EC PRIVATE KEY") return sec1ToPkcs8(b.der);
    if (b.label === "ENCRYPTED PRIVATE KEY") throw new AuthError("invalid_key", "encrypted private keys are not supported; decrypt with `openssl pkcs8 -nocrypt`");
  }
  throw new AuthError("invalid_key", "no PRIVATE KEY block found in PEM");
}

/** Certificates and public keys of a PEM text, as verification keys, in order. */
export async function verificationKeysFromPem(pem: string): Promise<VerificationKey[]> {
  const out: VerificationKey[] = [];
  for (const b of parsePem(pem)) {
    if (b.label === "CERTIFICATE") {
      out.push(await VerificationKey.fromSpki(certificateSpki(b.der), b.der));
    } else if (b.label === "PUBLIC KEY") {
      out.push(await VerificationKey.fromSpki(b.der));
    }
  }
  return out;
}

/** The DER bodies of a PEM text's `CERTIFICATE` blocks, in order. */
function certificateBlocks(pem: string): Uint8Array[] {
  return parsePem(pem)
    .filter((b) => b.label === "CERTIFICATE")
    .map((b) => b.der);
}

function sameKey(a: VerificationKey, b: VerificationKey): boolean {
  return a.kid === b.kid;
}

function dedupe(keys: VerificationKey[]): VerificationKey[] {
  const out: VerificationKey[] = [];
  for (const k of keys) if (!out.some((o) => sameKey(o, k))) out.push(k);
  return out;
}

function memo<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= f().catch((e: unknown) => {
      p = undefined;
      throw e;
    });
    return p;
  };
}

/** Options of {@link pemKeys}. */
export interface PemKeysOptions {
  /** The signing key: PKCS#8 `PRIVATE KEY` (PKCS#1 `RSA PRIVATE KEY` and SEC1 `EC PRIVATE KEY` are converted). */
  privateKey: string;
  /** The signing key's certificate, optionally followed by its chain (leaf first). Sent as `x5c`. */
  certificate?: string;
  /** More trusted keys for rotation: PEM text(s) holding certificates and/or `PUBLIC KEY` blocks. */
  additionalTrusted?: string | string[];
  /** Signing algorithm; default RS256 for RSA, ES256/384/512 by curve, EdDSA for Ed25519. */
  alg?: JwsAlgorithm;
}

/**
 * A key provider from PEM strings. Throws (from the first call) if the
 * certificate does not belong to the private key or an RSA key is under 2048 bits.
 */
export function pemKeys(options: PemKeysOptions): KeyProvider {
  const load = memo(async () => {
    const imported = await importPrivate(privateKeyDer(options.privateKey), options.alg);
    const own = await VerificationKey.fromCryptoKey(imported.publicKey);
    let chain: Uint8Array[] = [];
    let ownKey = own;
    if (options.certificate) {
      chain = certificateBlocks(options.certificate);
      if (chain.length === 0) throw new AuthError("invalid_key", "no CERTIFICATE block in the certificate PEM");
      const leaf = await VerificationKey.fromSpki(certificateSpki(chain[0]!), chain[0]);
      if (leaf.kid !== own.kid) throw new AuthError("invalid_key", "the certificate does not match the private key");
      ownKey = leaf;
    }
    const extra: VerificationKey[] = [];
    const more = options.additionalTrusted === undefined ? [] : [options.additionalTrusted].flat();
    for (const pem of more) extra.push(...(await verificationKeysFromPem(pem)));
    const signing: SigningKey = { alg: imported.alg, key: imported.key, kid: own.kid };
    if (chain.length > 0) signing.x5c = chain.map((c) => b64(c));
    return { signing, verification: dedupe([ownKey, ...extra]) };
  });
  return {
    signingKey: async () => (await load()).signing,
    verificationKeys: async () => (await load()).verification,
  };
}

/** Options of {@link cryptoKeys}. */
export interface CryptoKeysOptions {
  /** The private signing key, usable with `alg`. */
  privateKey: CryptoKey;
  /** Its public key; must be extractable (to compute the key ids). */
  publicKey: CryptoKey;
  /** Signing algorithm; default from the key type. */
  alg?: JwsAlgorithm;
  /** The certificate chain of the key as PEM (leaf first), sent as `x5c`. */
  certificate?: string;
  /** More trusted public keys (extractable), for rotation. */
  additionalTrusted?: CryptoKey[];
}

/** A key provider from WebCrypto keys you already hold. */
export function cryptoKeys(options: CryptoKeysOptions): KeyProvider {
  const load = memo(async () => {
    const own = await VerificationKey.fromCryptoKey(options.publicKey);
    const alg = options.alg ?? defaultAlgorithm(own.kind);
    checkAlgFitsKind(alg, own.kind);
    const signing: SigningKey = { alg, key: options.privateKey, kid: own.kid };
    let ownKey = own;
    if (options.certificate) {
      const chain = certificateBlocks(options.certificate);
      if (chain.length > 0) {
        ownKey = await VerificationKey.fromSpki(certificateSpki(chain[0]!), chain[0]);
        if (ownKey.kid !== own.kid) throw new AuthError("invalid_key", "the certificate does not match the public key");
        signing.x5c = chain.map((c) => b64(c));
      }
    }
    const extra = await Promise.all((options.additionalTrusted ?? []).map((k) => VerificationKey.fromCryptoKey(k)));
    return { signing, verification: dedupe([ownKey, ...extra]) };
  });
  return {
    signingKey: async () => (await load()).signing,
    verificationKeys: async () => (await load()).verification,
  };
}

/** Options of {@link generateSigningKeyPem} and {@link generatedKeys}. */
export interface GenerateKeyOptions {
  /** RS256 (default; RSA 2048), RS384/RS512 (RSA 3072/4096), PS256, ES256/384/512, EdDSA. */
  alg?: Exclude<JwsAlgorithm, "HS256">;
  /** Certificate subject. Default `CN=registry-kit token signer`. */
  subject?: string;
  /** Certificate validity in days. Default 3650. */
  validDays?: number;
}

/** PEM texts of a signing key and its self-signed certificate. */
export interface KeyPem {
  /** PKCS#8 `PRIVATE KEY`. Keep it secret (mode 0600). */
  privateKey: string;
  /** The self-signed `CERTIFICATE`; this is also the verifier's root certificate bundle. */
  certificate: string;
}

function generationParams(alg: Exclude<JwsAlgorithm, "HS256">): { gen: RsaHashedKeyGenParams | EcKeyGenParams | Algorithm; sign: Algorithm } {
  const spec = algorithmSpec(alg)!;
  if (spec.family === "RSA") {
    const hash = (spec.importParams as RsaHashedImportParams).hash;
    const modulusLength = alg.endsWith("512") ? 4096 : alg.endsWith("384") ? 3072 : 2048;
    return {
      gen: { ...(spec.importParams as RsaHashedImportParams), modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash },
      sign: alg.startsWith("PS") ? ({ name: "RSA-PSS", saltLength: 32 } as RsaPssParams) : { name: "RSASSA-PKCS1-v1_5" },
    };
  }
  if (spec.family === "EC") return { gen: spec.importParams as EcKeyGenParams, sign: spec.signParams };
  return { gen: { name: "Ed25519" }, sign: { name: "Ed25519" } };
}

async function generate(options: GenerateKeyOptions) {
  const alg = options.alg ?? "RS256";
  const { gen, sign } = generationParams(alg);
  const { BasicConstraintsExtension, KeyUsageFlags, KeyUsagesExtension, X509CertificateGenerator } = await x509();
  const keys = (await crypto.subtle.generateKey(gen, true, ["sign", "verify"])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await X509CertificateGenerator.createSelfSigned({
    name: options.subject ?? "CN=registry-kit token signer",
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (options.validDays ?? 3650) * 86_400_000),
    keys,
    signingAlgorithm: sign,
    extensions: [
      new BasicConstraintsExtension(true, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyCertSign, true),
    ],
  });
  return { alg, keys, cert };
}

/**
 * Generate a signing key and a self-signed certificate (with
 * `@peculiar/x509`), and return both as PEM so a server can persist them
 * (for example under `./data/keys`) and load them back with {@link pemKeys}.
 */
export async function generateSigningKeyPem(options: GenerateKeyOptions = {}): Promise<KeyPem> {
  const { keys, cert } = await generate(options);
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { privateKey: toPem("PRIVATE KEY", pkcs8), certificate: cert.toString("pem") + "\n" };
}

/** A key provider whose key lives only in memory; {@link GeneratedKeyProvider.exportPem} gives its PEMs. */
export interface GeneratedKeyProvider extends KeyProvider {
  /** The private key and the self-signed certificate as PEM. */
  exportPem(): Promise<KeyPem>;
}

/** Generate a key pair with a self-signed certificate in memory (for tests and first start). */
export function generatedKeys(options: GenerateKeyOptions = {}): GeneratedKeyProvider {
  const load = memo(async () => {
    const pem = await generateSigningKeyPem(options);
    return { pem, provider: pemKeys({ ...pem, alg: options.alg ?? "RS256" }) };
  });
  return {
    signingKey: async () => (await load()).provider.signingKey(),
    verificationKeys: async () => (await load()).provider.verificationKeys(),
    exportPem: async () => (await load()).pem,
  };
}

/** Options of {@link hmacKeys}. */
export interface HmacKeysOptions {
  /** The shared secret, at least 32 bytes; must not be a PEM key or certificate. */
  secret: string | Uint8Array;
  /** A `kid` to put in the header. Default none. */
  kid?: string;
}

/** Refuse secrets that are really public keys (the classic HS256 key-confusion attack) or too short. */
export function checkHmacSecret(secret: string | Uint8Array): Uint8Array {
  const bytes = typeof secret === "string" ? utf8(secret) : secret;
  const text = typeof secret === "string" ? secret : new TextDecoder().decode(secret);
  if (text.includes("-----BEGIN")) throw new AuthError("invalid_key", "an HS256 secret must not be a PEM key or certificate");
  if (bytes.length < 32) throw new AuthError("invalid_key", "an HS256 secret must be at least 32 bytes");
  return bytes;
}

/** Import a checked HS256 secret as a WebCrypto HMAC key. */
export async function importHmacSecret(secret: string | Uint8Array, usage: "sign" | "verify"): Promise<CryptoKey> {
  const bytes = checkHmacSecret(secret);
  const key = await crypto.subtle.importKey("raw", toArrayBuffer(bytes), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
  if (usage === "sign") rememberKeyMaterial(key, { format: "secret", bytes });
  return key;
}

/**
 * A key provider signing HS256 with a shared secret. It has no public
 * verification keys: verifiers must be given the same secret as `hmacSecret`.
 */
export function hmacKeys(options: HmacKeysOptions): KeyProvider {
  checkHmacSecret(options.secret);
  const load = memo(async () => {
    const signing: SigningKey = { alg: "HS256", key: await importHmacSecret(options.secret, "sign") };
    if (options.kid) signing.kid = options.kid;
    return signing;
  });
  return { signingKey: load, verificationKeys: async () => [] };
}

export { MIN_RSA_BITS };
