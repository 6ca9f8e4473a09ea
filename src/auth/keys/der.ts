/**
 * The few DER operations the key code needs: reading the algorithm of a
 * SubjectPublicKeyInfo or PKCS#8 key, finding the SubjectPublicKeyInfo in an
 * X.509 certificate, and wrapping a PKCS#1 RSA key as PKCS#8. Not a general
 * ASN.1 parser: reading keys and certificates at start-up this way keeps
 * `@peculiar/x509` (and its ASN.1 stack, a few hundred ms to load) out of the
 * process until an `x5c` chain must be verified.
 *
 * @module
 */
import { AuthError } from "../errors.js";
import { concatBytes, toHex } from "../../util/bytes.js";

interface Tlv {
  tag: number;
  /** Offset of the tag byte. */
  offset: number;
  /** Offset of the content. */
  start: number;
  /** Offset just after the content. */
  end: number;
}

function readTlv(der: Uint8Array, offset: number): Tlv {
  if (offset + 2 > der.length) throw new AuthError("invalid_key", "truncated DER");
  const tag = der[offset]!;
  let len = der[offset + 1]!;
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > der.length) throw new AuthError("invalid_key", "bad DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[start + i]!;
    start += n;
  }
  const end = start + len;
  if (end > der.length) throw new AuthError("invalid_key", "truncated DER");
  return { tag, offset, start, end };
}

function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  let at = parent.start;
  while (at < parent.end) {
    const t = readTlv(der, at);
    out.push(t);
    at = t.end;
  }
  return out;
}

function hex(der: Uint8Array, t: Tlv): string {
  return toHex(der.subarray(t.start, t.end));
}

/** The key algorithm named by an AlgorithmIdentifier. */
export type KeyKind =
  | { kty: "RSA" }
  | { kty: "EC"; crv: "P-256" | "P-384" | "P-521" }
  | { kty: "OKP"; crv: "Ed25519" };

const OID_RSA = "2a864886f70d010101";
const OID_EC = "2a8648ce3d0201";
const OID_ED25519 = "2b6570";
const CURVES: Record<string, "P-256" | "P-384" | "P-521"> = {
  "2a8648ce3d030107": "P-256",
  "2b81040022": "P-384",
  "2b81040023": "P-521",
};

function kindOf(der: Uint8Array, algId: Tlv): KeyKind {
  const parts = children(der, algId);
  const oid = parts[0];
  if (!oid || oid.tag !== 0x06) throw new AuthError("invalid_key", "bad AlgorithmIdentifier");
  const o = hex(der, oid);
  if (o === OID_RSA) return { kty: "RSA" };
  if (o === OID_ED25519) return { kty: "OKP", crv: "Ed25519" };
  if (o === OID_EC) {
    const p = parts[1];
    const crv = p && p.tag === 0x06 ? CURVES[hex(der, p)] : undefined;
    if (!crv) throw new AuthError("invalid_key", "unsupported EC curve");
    return { kty: "EC", crv };
  }
  throw new AuthError("invalid_key", `unsupported key algorithm OID ${o}`);
}

/** The key algorithm of a DER SubjectPublicKeyInfo. */
export function spkiKind(spki: Uint8Array): KeyKind {
  const top = readTlv(spki, 0);
  if (top.tag !== 0x30 || top.end !== spki.length) throw new AuthError("invalid_key", "not a SubjectPublicKeyInfo");
  const [algId] = children(spki, top);
  if (!algId || algId.tag !== 0x30) throw new AuthError("invalid_key", "not a SubjectPublicKeyInfo");
  return kindOf(spki, algId);
}

/**
 * The DER SubjectPublicKeyInfo of a DER X.509 certificate (a view into
 * `cert`). Checks the structure up to that field; the rest of the certificate
 * (extensions, signature) is read only when a chain is verified.
 */
export function certificateSpki(cert: Uint8Array): Uint8Array {
  const bad = (): never => {
    throw new AuthError("invalid_key", "not an X.509 certificate");
  };
  const top = readTlv(cert, 0);
  if (top.tag !== 0x30 || top.end !== cert.length) bad();
  const [tbs, sigAlg, sig] = children(cert, top);
  if (!tbs || tbs.tag !== 0x30 || sigAlg?.tag !== 0x30 || sig?.tag !== 0x03) bad();
  const fields = children(cert, tbs!);
  // version [0] EXPLICIT is optional; then serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo
  const first = fields[0]?.tag === 0xa0 ? 1 : 0;
  const expected = [0x02, 0x30, 0x30, 0x30, 0x30, 0x30];
  for (let i = 0; i < expected.length; i++) if (fields[first + i]?.tag !== expected[i]) bad();
  const spki = fields[first + 5]!;
  return cert.subarray(spki.offset, spki.end);
}

/** The key algorithm of a DER PKCS#8 PrivateKeyInfo. */
export function pkcs8Kind(pkcs8: Uint8Array): KeyKind {
  const top = readTlv(pkcs8, 0);
  if (top.tag !== 0x30) throw new AuthError("invalid_key", "not a PKCS#8 key");
  const parts = children(pkcs8, top);
  const algId = parts[1];
  if (!algId || algId.tag !== 0x30) throw new AuthError("invalid_key", "not a PKCS#8 key");
  return kindOf(pkcs8, algId);
}

function encodeLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  while (n > 0) {
    bytes.unshift(n & 0xff);
    n = Math.floor(n / 256);
  }
  return [0x80 | bytes.length, ...bytes];
}

function tlv(tag: number, content: Uint8Array): Uint8Array {
  const head = [tag, ...encodeLength(content.length)];
  const out = new Uint8Array(head.length + content.length);
  out.set(head, 0);
  out.set(content, head.length);
  return out;
}

/** Wrap a PKCS#1 `RSA PRIVATE KEY` as a PKCS#8 `PRIVATE KEY` (what WebCrypto imports). */
export function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  const version = Uint8Array.of(0x02, 0x01, 0x00);
  const algId = Uint8Array.of(0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00);
  return tlv(0x30, concatBytes([version, algId, tlv(0x04, pkcs1)]));
}

/** Wrap a SEC1 `EC PRIVATE KEY` (which must name its curve) as PKCS#8. */
export function sec1ToPkcs8(sec1: Uint8Array): Uint8Array {
  const top = readTlv(sec1, 0);
  const params = children(sec1, top).find((t) => t.tag === 0xa0);
  if (!params) throw new AuthError("invalid_key", "EC PRIVATE KEY without curve parameters");
  const curveOid = readTlv(sec1, params.start);
  if (curveOid.tag !== 0x06) throw new AuthError("invalid_key", "EC PRIVATE KEY with explicit curve parameters is not supported");
  const oidBytes = sec1.subarray(params.start, curveOid.end);
  const algId = tlv(0x30, concatBytes([Uint8Array.of(0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01), oidBytes]));
  return tlv(0x30, concatBytes([Uint8Array.of(0x02, 0x01, 0x00), algId, tlv(0x04, sec1)]));
}
