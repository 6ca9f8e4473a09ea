/**
 * Public keys and the one signature check every kind uses: PEM to DER, the
 * key's kind, Web Crypto imports (cached per algorithm) and `verify` that
 * tells a malformed signature from one that simply does not verify.
 *
 * @module
 */
import { fromB64, toArrayBuffer } from "../util/bytes.js";
import { ecdsaRaw, spkiKind, type KeyKind } from "./der.js";

/** The hash a signature scheme uses with a key (ECDSA and RSA; Ed25519 has its own). */
export type HashName = "SHA-256" | "SHA-384" | "SHA-512";

/** How the signature was made with an RSA key. */
export type RsaScheme = "RSASSA-PKCS1-v1_5" | "RSA-PSS";

/** The bytes of the first PEM block labelled `label`, or `undefined` when there is none or it is not base64. */
export function pemBlock(pem: string, label: string): Uint8Array | undefined {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(pem);
  if (!m) return undefined;
  try {
    return fromB64(m[1]!.replace(/\s+/g, ""));
  } catch {
    return undefined;
  }
}

/** Every PEM block labelled `label`, in order. */
export function pemBlocks(pem: string, label: string): Uint8Array[] {
  const out: Uint8Array[] = [];
  const re = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`, "g");
  for (const m of pem.matchAll(re)) out.push(fromB64(m[1]!.replace(/\s+/g, "")));
  return out;
}

/** A public key registry-kit verifies with, imported into Web Crypto on first use. */
export class PublicKey {
  readonly kind: KeyKind;
  private readonly imported = new Map<string, Promise<CryptoKey>>();

  /** @throws Error with a sentence when `spki` is no key of a supported kind. */
  constructor(readonly spki: Uint8Array) {
    const kind = spkiKind(spki);
    if (kind !== "P-256" && kind !== "P-384" && kind !== "Ed25519" && kind !== "RSA") throw new Error(kind);
    this.kind = kind;
  }

  /** A key from a `PUBLIC KEY` PEM. */
  static fromPem(pem: string): PublicKey {
    const der = pemBlock(pem, "PUBLIC KEY");
    if (!der) throw new Error("not a PEM PUBLIC KEY");
    return new PublicKey(der);
  }

  private cryptoKey(params: RsaHashedImportParams | EcKeyImportParams | Algorithm): Promise<CryptoKey> {
    const id = JSON.stringify(params);
    let key = this.imported.get(id);
    if (!key) {
      key = crypto.subtle.importKey("spki", toArrayBuffer(this.spki), params, false, ["verify"]);
      this.imported.set(id, key);
    }
    return key;
  }

  /**
   * Checks `sig` over `data`: `"ok"`, `"no"` (well-formed, does not verify) or
   * `"malformed"` (cannot be a signature of this key: wrong length, broken DER).
   * `hashes` are tried in order (cosign writes SHA-256 with every curve).
   */
  async verify(sig: Uint8Array, data: Uint8Array, hashes: readonly HashName[], rsa: RsaScheme = "RSASSA-PKCS1-v1_5"): Promise<"ok" | "no" | "malformed"> {
    const bytes = toArrayBuffer(data);
    if (this.kind === "Ed25519") {
      if (sig.length !== 64) return "malformed";
      const key = await this.cryptoKey({ name: "Ed25519" });
      return (await crypto.subtle.verify({ name: "Ed25519" }, key, toArrayBuffer(sig), bytes)) ? "ok" : "no";
    }
    if (this.kind === "RSA") {
      for (const hash of hashes) {
        const key = await this.cryptoKey({ name: rsa, hash });
        const bits = (key.algorithm as RsaHashedKeyAlgorithm).modulusLength;
        if (sig.length !== Math.ceil(bits / 8)) return "malformed";
        const params = rsa === "RSA-PSS" ? { name: rsa, saltLength: hashBytes(hash) } : { name: rsa };
        if (await crypto.subtle.verify(params, key, toArrayBuffer(sig), bytes)) return "ok";
      }
      return "no";
    }
    const raw = ecdsaRaw(sig, this.kind === "P-256" ? 32 : 48);
    if (!raw) return "malformed";
    const key = await this.cryptoKey({ name: "ECDSA", namedCurve: this.kind });
    for (const hash of hashes) {
      if (await crypto.subtle.verify({ name: "ECDSA", hash }, key, toArrayBuffer(raw), bytes)) return "ok";
    }
    return "no";
  }
}

function hashBytes(hash: HashName): number {
  return hash === "SHA-256" ? 32 : hash === "SHA-384" ? 48 : 64;
}

/** The hashes cosign and containers/image use with a key: SHA-256 always, and the curve's own for P-384. */
export function cosignHashes(key: PublicKey): HashName[] {
  return key.kind === "P-384" ? ["SHA-256", "SHA-384"] : ["SHA-256"];
}

/** The hash sigstore bundles use with a key: the curve's own (SHA-384 for P-384), else SHA-256. */
export function sigstoreHashes(key: PublicKey): HashName[] {
  return key.kind === "P-384" ? ["SHA-384", "SHA-256"] : ["SHA-256"];
}
