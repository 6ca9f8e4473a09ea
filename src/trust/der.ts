/**
 * The DER the verifiers read without loading `@peculiar/x509`: the algorithm
 * of a SubjectPublicKeyInfo, and an ECDSA signature's `SEQUENCE { r, s }`
 * turned into the fixed-width `r || s` Web Crypto verifies.
 *
 * @module
 */
import { toHex } from "../util/bytes.js";

/** One DER element: its tag, where it begins, where its content begins and ends. */
export interface Tlv {
  tag: number;
  offset: number;
  start: number;
  end: number;
}

/** One TLV at `offset`, or `undefined` when it runs past `limit` or uses a length form DER forbids. */
export function readTlv(der: Uint8Array, offset: number, limit = der.length): Tlv | undefined {
  if (offset + 2 > limit) return undefined;
  const tag = der[offset]!;
  let len = der[offset + 1]!;
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || start + n > limit) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[start + i]!;
    start += n;
  }
  const end = start + len;
  return end > limit ? undefined : { tag, offset, start, end };
}

/** The elements inside `parent`, in order (as many as parse). */
export function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const t = readTlv(der, at, parent.end);
    if (!t) break;
    out.push(t);
    at = t.end;
  }
  return out;
}

/** A DER element of `tag` around `content`. */
export function encodeTlv(tag: number, content: Uint8Array): Uint8Array {
  const n = content.length;
  const head = n < 0x80 ? [tag, n] : n < 0x100 ? [tag, 0x81, n] : n < 0x10000 ? [tag, 0x82, n >> 8, n & 0xff] : [tag, 0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  const out = new Uint8Array(head.length + n);
  out.set(head, 0);
  out.set(content, head.length);
  return out;
}

/** The key kinds the verifiers accept. */
export type KeyKind = "P-256" | "P-384" | "Ed25519" | "RSA";

const OID_RSA = "2a864886f70d010101";
const OID_EC = "2a8648ce3d0201";
const OID_ED25519 = "2b6570";
const CURVES: Record<string, KeyKind> = { "2a8648ce3d030107": "P-256", "2b81040022": "P-384" };

/** The kind of a DER SubjectPublicKeyInfo, or a sentence saying why it is none registry-kit verifies with. */
export function spkiKind(spki: Uint8Array): KeyKind | string {
  const top = readTlv(spki, 0);
  if (!top || top.tag !== 0x30 || top.end !== spki.length) return "not a SubjectPublicKeyInfo";
  const algId = readTlv(spki, top.start, top.end);
  const oid = algId && algId.tag === 0x30 ? readTlv(spki, algId.start, algId.end) : undefined;
  if (!algId || !oid || oid.tag !== 0x06) return "not a SubjectPublicKeyInfo";
  const o = toHex(spki.subarray(oid.start, oid.end));
  if (o === OID_RSA) return "RSA";
  if (o === OID_ED25519) return "Ed25519";
  if (o !== OID_EC) return `unsupported key algorithm (OID ${o})`;
  const param = readTlv(spki, oid.end, algId.end);
  const curve = param && param.tag === 0x06 ? CURVES[toHex(spki.subarray(param.start, param.end))] : undefined;
  return curve ?? "unsupported EC curve (P-256 and P-384 are verified)";
}

/** One DER INTEGER's magnitude left-padded to `width` bytes, or `undefined` when it does not fit or is not minimal. */
function integer(der: Uint8Array, t: Tlv | undefined, width: number): Uint8Array | undefined {
  if (!t || t.tag !== 0x02 || t.end === t.start) return undefined;
  let bytes = der.subarray(t.start, t.end);
  if (bytes[0]! & 0x80) return undefined; // negative
  if (bytes.length > 1 && bytes[0] === 0 && !(bytes[1]! & 0x80)) return undefined; // not minimal
  if (bytes[0] === 0) bytes = bytes.subarray(1);
  if (bytes.length > width) return undefined;
  const out = new Uint8Array(width);
  out.set(bytes, width - bytes.length);
  return out;
}

/**
 * An ECDSA signature as Web Crypto wants it (`r || s`, each `width` bytes),
 * from DER (what cosign and Go write) or already raw; `undefined` when it is neither.
 */
export function ecdsaRaw(sig: Uint8Array, width: number): Uint8Array | undefined {
  if (sig.length === 2 * width && sig[0] !== 0x30) return sig;
  const top = readTlv(sig, 0);
  if (!top || top.tag !== 0x30 || top.end !== sig.length) return sig.length === 2 * width ? sig : undefined;
  const rT = readTlv(sig, top.start, top.end);
  const sT = rT ? readTlv(sig, rT.end, top.end) : undefined;
  if (!sT || sT.end !== top.end) return undefined;
  const r = integer(sig, rT, width);
  const s = integer(sig, sT, width);
  if (!r || !s) return undefined;
  const out = new Uint8Array(2 * width);
  out.set(r, 0);
  out.set(s, width);
  return out;
}
