/**
 * Signed certificate timestamps (RFC 6962 §3.2) embedded in a Fulcio
 * certificate: each must be signed by a CT log of the trusted root over the
 * precertificate (the TBS without the SCT extension, and the issuer's key
 * hash), and at least one must be there, as `@sigstore/verify` requires by default.
 *
 * @module
 */
import { concatBytes, equalBytes, toArrayBuffer, toHex } from "../util/bytes.js";
import { children, encodeTlv, readTlv, type Tlv } from "./der.js";
import type { PublicKey } from "./keys.js";
import { refuse } from "./refusal.js";

/** A CT log of the trusted root. */
export interface TrustedCtLog {
  keyId: string;
  key: PublicKey;
  valid: { start?: number; end?: number };
}

const OID_SCT_LIST = Uint8Array.of(0x2b, 0x06, 0x01, 0x04, 0x01, 0xd6, 0x79, 0x02, 0x04, 0x02); // 1.3.6.1.4.1.11129.2.4.2

/** The certificate's TBS re-encoded without the SCT list extension, and that extension's value; `undefined` without one. */
function splitPrecert(cert: Uint8Array): { tbs: Uint8Array; list: Uint8Array } | undefined {
  const top = readTlv(cert, 0);
  const tbs = top && readTlv(cert, top.start, top.end);
  if (!tbs || tbs.tag !== 0x30) return refuse("malformed", "the signing certificate is not DER");
  const fields = children(cert, tbs);
  const wrapper = fields.find((f) => f.tag === 0xa3);
  const extSeq = wrapper && readTlv(cert, wrapper.start, wrapper.end);
  if (!wrapper || !extSeq) return undefined;
  let list: Uint8Array | undefined;
  const kept: Tlv[] = [];
  for (const ext of children(cert, extSeq)) {
    const parts = children(cert, ext);
    const oid = parts[0];
    if (oid && oid.tag === 0x06 && equalBytes(cert.subarray(oid.start, oid.end), OID_SCT_LIST)) {
      const value = parts[parts.length - 1]!; // extnValue OCTET STRING, holding an OCTET STRING of the TLS list
      const inner = readTlv(cert, value.start, value.end);
      list = inner ? cert.subarray(inner.start, inner.end) : undefined;
    } else kept.push(ext);
  }
  if (!list) return undefined;
  const raw = (t: Tlv) => cert.subarray(t.offset, t.end);
  const newExts = encodeTlv(0xa3, encodeTlv(0x30, concatBytes(kept.map(raw))));
  const newTbs = encodeTlv(0x30, concatBytes(fields.map((f) => (f === wrapper ? newExts : raw(f)))));
  return { tbs: newTbs, list };
}

interface Sct {
  /** Everything the log signed that comes from the SCT itself: version and timestamp, extensions. */
  version: number;
  logId: string;
  timestamp: Uint8Array;
  extensions: Uint8Array;
  sig: Uint8Array;
}

/** The SCTs of a TLS-encoded SignedCertificateTimestampList. */
function parseList(list: Uint8Array): Sct[] {
  const u16 = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
  const out: Sct[] = [];
  if (list.length < 2 || u16(list, 0) !== list.length - 2) return refuse("malformed", "the certificate's SCT list is malformed");
  for (let at = 2; at < list.length; ) {
    const len = u16(list, at);
    const sct = list.subarray(at + 2, at + 2 + len);
    at += 2 + len;
    const extLen = sct.length >= 43 ? u16(sct, 41) : -1;
    const sigAt = 43 + extLen + 2; // hash and signature algorithm bytes, then the signature's length
    if (extLen < 0 || sct.length < sigAt + 2 || sct.length !== sigAt + 2 + u16(sct, sigAt)) return refuse("malformed", "an SCT of the certificate is malformed");
    out.push({ version: sct[0]!, logId: toHex(sct.subarray(1, 33)), timestamp: sct.subarray(33, 41), extensions: sct.subarray(41, 43 + extLen), sig: sct.subarray(sigAt + 2) });
  }
  return out;
}

/** Checks the SCTs of `leaf` (issued by the certificate whose SPKI is `issuerSpki`) against the CT logs. */
export async function checkScts(leaf: Uint8Array, issuerSpki: Uint8Array, logs: readonly TrustedCtLog[]): Promise<void> {
  const precert = splitPrecert(leaf);
  const scts = precert ? parseList(precert.list) : [];
  if (scts.length === 0) return refuse("sct-invalid", "the signing certificate carries no signed certificate timestamp");
  const issuerKeyHash = new Uint8Array(await crypto.subtle.digest("SHA-256", toArrayBuffer(issuerSpki)));
  const tbsLength = Uint8Array.of(precert!.tbs.length >> 16, (precert!.tbs.length >> 8) & 0xff, precert!.tbs.length & 0xff);
  for (const sct of scts) {
    // digitally-signed struct: version, certificate_timestamp (0), timestamp, precert_entry (1), issuer key hash, TBS, extensions
    const signed = concatBytes([Uint8Array.of(sct.version, 0), sct.timestamp, Uint8Array.of(0, 1), issuerKeyHash, tbsLength, precert!.tbs, sct.extensions]);
    const time = Number(new DataView(toArrayBuffer(sct.timestamp)).getBigUint64(0));
    let ok = false;
    for (const log of logs) {
      if (log.keyId !== sct.logId || (log.valid.start !== undefined && time < log.valid.start) || (log.valid.end !== undefined && time > log.valid.end)) continue;
      if ((await log.key.verify(sct.sig, signed, ["SHA-256"])) === "ok") ok = true;
    }
    if (!ok) refuse("sct-invalid", `the signing certificate's SCT from log ${sct.logId.slice(0, 16)}… is signed by no trusted CT log`);
  }
}
