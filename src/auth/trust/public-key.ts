/**
 * A public key trusted to verify tokens, with its two key ids (libtrust `kid`
 * and RFC 7638 thumbprint), its public JWK, and the WebCrypto keys imported
 * for each algorithm it may verify.
 *
 * @module
 */
import { AuthError } from "../errors.js";
import { algorithmSpec, MIN_RSA_BITS, type JwsAlgorithm } from "../jwt/algorithms.js";
import { spkiKind, type KeyKind } from "../keys/der.js";
import { toArrayBuffer } from "../../util/bytes.js";
import { jwkThumbprint, libtrustKeyId } from "../keys/kid.js";

/** Parameters used only to read a key's JWK form. */
function probeParams(kind: KeyKind): RsaHashedImportParams | EcKeyImportParams | Algorithm {
  switch (kind.kty) {
    case "RSA":
      return { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    case "EC":
      return { name: "ECDSA", namedCurve: kind.crv } as EcKeyImportParams;
    case "OKP":
      return { name: "Ed25519" };
  }
}

/** The public members of a JWK (drops private parts and WebCrypto extras). */
export function publicJwk(jwk: JsonWebKey): JsonWebKey {
  switch (jwk.kty) {
    case "RSA":
      return { kty: "RSA", n: jwk.n!, e: jwk.e! };
    case "EC":
      return { kty: "EC", crv: jwk.crv!, x: jwk.x!, y: jwk.y! };
    case "OKP":
      return { kty: "OKP", crv: jwk.crv!, x: jwk.x! };
    default:
      throw new AuthError("invalid_key", `unsupported key type ${String(jwk.kty)}`);
  }
}

/** A public key that may verify tokens. Build one with {@link VerificationKey.fromSpki} and friends. */
export class VerificationKey {
  readonly #imported = new Map<JwsAlgorithm, Promise<CryptoKey>>();

  private constructor(
    /** DER SubjectPublicKeyInfo. */
    readonly spki: Uint8Array,
    /** Key type and curve. */
    readonly kind: KeyKind,
    /** The public JWK (RFC 7517), without `alg`/`use`. */
    readonly jwk: JsonWebKey,
    /** RSA modulus size in bits; `undefined` for EC/OKP keys. */
    readonly bits: number | undefined,
    /**
     * The DER X.509 certificate this key came from, if any (an anchor for
     * `x5c` chains; parsed only when a chain is verified).
     */
    readonly certificateDer: Uint8Array | undefined,
  ) {
    this.kid = libtrustKeyId(spki);
    this.thumbprint = jwkThumbprint(jwk);
  }

  /** The libtrust key id (Distribution 2.x `kid`). */
  readonly kid: string;
  /** The RFC 7638 SHA-256 thumbprint (Distribution 3.x `kid`). */
  readonly thumbprint: string;

  /**
   * Build from a DER SubjectPublicKeyInfo (and the DER certificate holding
   * it, if any). Throws for unsupported key types and for RSA keys under 2048
   * bits.
   */
  static async fromSpki(spki: Uint8Array, certificateDer?: Uint8Array): Promise<VerificationKey> {
    const kind = spkiKind(spki);
    const probe = await crypto.subtle.importKey("spki", toArrayBuffer(spki), probeParams(kind), true, ["verify"]);
    const jwk = publicJwk(await crypto.subtle.exportKey("jwk", probe));
    let bits: number | undefined;
    if (kind.kty === "RSA") {
      bits = (probe.algorithm as RsaHashedKeyAlgorithm).modulusLength;
      if (bits < MIN_RSA_BITS) throw new AuthError("invalid_key", `RSA key of ${bits} bits refused (minimum ${MIN_RSA_BITS})`);
    }
    return new VerificationKey(spki, kind, jwk, bits, certificateDer);
  }

  /** Build from a public `CryptoKey`, which must be extractable. */
  static async fromCryptoKey(key: CryptoKey, certificateDer?: Uint8Array): Promise<VerificationKey> {
    if (key.type !== "public") throw new AuthError("invalid_key", "a verification key must be a public key");
    return VerificationKey.fromSpki(new Uint8Array(await crypto.subtle.exportKey("spki", key)), certificateDer);
  }

  /** Build from a public JWK (`kty` RSA, EC or OKP). */
  static async fromJwk(jwk: JsonWebKey): Promise<VerificationKey> {
    const pub = publicJwk(jwk);
    const params: RsaHashedImportParams | EcKeyImportParams | Algorithm =
      pub.kty === "RSA"
        ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
        : pub.kty === "EC"
          ? ({ name: "ECDSA", namedCurve: pub.crv! } as EcKeyImportParams)
          : { name: pub.crv! };
    const key = await crypto.subtle.importKey("jwk", pub, params, true, ["verify"]);
    return VerificationKey.fromCryptoKey(key);
  }

  /** Whether this key's type (and curve) is the one `alg` needs: an EC key never verifies RS256. */
  supports(alg: JwsAlgorithm): boolean {
    const spec = algorithmSpec(alg);
    if (!spec) return false;
    if (spec.family !== this.kind.kty) return false;
    if (spec.crv !== undefined && this.kind.kty !== "RSA" && spec.crv !== this.kind.crv) return false;
    return true;
  }

  /** The WebCrypto key for verifying with `alg` (imported once, then cached). Throws if unsupported. */
  cryptoKey(alg: JwsAlgorithm): Promise<CryptoKey> {
    let p = this.#imported.get(alg);
    if (!p) {
      if (!this.supports(alg)) return Promise.reject(new Error(`key type ${this.kind.kty} cannot verify ${alg}`));
      const spec = algorithmSpec(alg)!;
      p = crypto.subtle.importKey("spki", toArrayBuffer(this.spki), spec.importParams, false, ["verify"]);
      this.#imported.set(alg, p);
    }
    return p;
  }
}
