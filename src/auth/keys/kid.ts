/**
 * Key ids: the libtrust key id that CNCF Distribution 2.x matches a token's
 * `kid` against, and the RFC 7638 JWK thumbprint that Distribution 3.x uses.
 *
 * @module
 */
import { AuthError } from "../errors.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { base32 } from "rfc4648";
import { b64url, utf8 } from "../../util/bytes.js";

/**
 * The libtrust key id of a public key: SHA-256 of the DER
 * SubjectPublicKeyInfo, first 30 bytes (240 bits), base32 (48 characters),
 * in 12 groups of 4 joined by `:`.
 *
 * @example `PYYO:TEWU:V7JH:26JV:AQTZ:LJC3:SXVJ:XGHA:34F2:2LAQ:ZRMK:Z7Q6`
 */
export function libtrustKeyId(spkiDer: Uint8Array): string {
  const encoded = base32.stringify(sha256(spkiDer).subarray(0, 30), { pad: false });
  return encoded.match(/.{4}/g)!.join(":");
}

/** The JWK members RFC 7638 §3.2 hashes, per key type, in lexicographic order. */
const REQUIRED: Record<string, readonly string[]> = {
  RSA: ["e", "kty", "n"],
  EC: ["crv", "kty", "x", "y"],
  OKP: ["crv", "kty", "x"],
  oct: ["k", "kty"],
};

/**
 * The RFC 7638 JWK thumbprint (SHA-256, base64url) of a public JWK.
 * Throws when the key type is unknown or a required member is missing.
 */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const members = jwk.kty ? REQUIRED[jwk.kty] : undefined;
  if (!members) throw new AuthError("invalid_key", `cannot compute thumbprint for key type ${String(jwk.kty)}`);
  const record = jwk as Record<string, unknown>;
  const parts = members.map((m) => {
    const v = record[m];
    if (typeof v !== "string") throw new AuthError("invalid_key", `JWK member "${m}" missing`);
    return `${JSON.stringify(m)}:${JSON.stringify(v)}`;
  });
  return b64url(sha256(utf8(`{${parts.join(",")}}`)));
}

/** The libtrust key id of a public `CryptoKey` (which must be extractable). */
export async function libtrustKeyIdOf(publicKey: CryptoKey): Promise<string> {
  return libtrustKeyId(new Uint8Array(await crypto.subtle.exportKey("spki", publicKey)));
}
