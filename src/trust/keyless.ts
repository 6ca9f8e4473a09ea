/**
 * Keyless sigstore bundles, verified offline against a trusted root: the
 * Fulcio certificate chains to one of its certificate authorities, a Rekor
 * entry of one of its logs promises (SET) that the signature was logged and
 * gives the signing time, the certificate was valid then, and its OIDC issuer
 * and subject are among the configured identities. The checks and their
 * order follow `@sigstore/verify` (docs/signatures.md says what is left out).
 *
 * @module
 */
import { asciiBytes, fromUtf8, toHex } from "../util/bytes.js";
import { x509, type X509 } from "../util/x509.js";
import { certificate, isSignedBy } from "./certificates.js";
import { base64 } from "./cosign.js";
import { PublicKey, sigstoreHashes } from "./keys.js";
import { keyOf } from "./notation.js";
import { refuse } from "./refusal.js";
import type { Bundle } from "./bundle.js";
import type { SigstoreIdentity, SigstoreOptions } from "./types.js";

/** What a bundle signs: the signed bytes, the signature, and the digest the log entry records. */
export interface KeylessContent {
  signed: Uint8Array;
  sig: Uint8Array;
  digest: Uint8Array;
  kind: "hashedrekord" | "dsse";
}

interface Validity {
  start?: number;
  end?: number;
}

/** The parts of a trusted root the verifier uses, decoded once. */
export interface SigstoreTrust {
  authorities: { chain: Uint8Array[]; valid: Validity }[];
  logs: { keyId: string; key: PublicKey; valid: Validity }[];
  identities: readonly SigstoreIdentity[];
}

function validity(v: { start?: string; end?: string } | undefined): Validity {
  return { start: v?.start ? Date.parse(v.start) : undefined, end: v?.end ? Date.parse(v.end) : undefined };
}

function within(v: Validity, t: number): boolean {
  return (v.start === undefined || v.start <= t) && (v.end === undefined || t <= v.end);
}

type RootJson = {
  certificateAuthorities?: { certChain?: { certificates?: { rawBytes?: string }[] }; validFor?: { start?: string; end?: string } }[];
  tlogs?: { logId?: { keyId?: string }; publicKey?: { rawBytes?: string; validFor?: { start?: string; end?: string } } }[];
};

/** The trusted root's authorities and logs; throws when it has neither a CA nor a log. */
export function loadSigstore(options: SigstoreOptions): SigstoreTrust {
  const root = options.trustedRoot as RootJson;
  const authorities = (root?.certificateAuthorities ?? []).map((ca) => ({
    chain: (ca.certChain?.certificates ?? []).map((c) => base64(c.rawBytes) ?? new Uint8Array()),
    valid: validity(ca.validFor),
  }));
  const logs = (root?.tlogs ?? []).map((log) => ({
    keyId: toHex(base64(log.logId?.keyId) ?? new Uint8Array()),
    key: new PublicKey(base64(log.publicKey?.rawBytes) ?? new Uint8Array()),
    valid: validity(log.publicKey?.validFor),
  }));
  if (authorities.length === 0 || logs.length === 0) throw new Error("sigstore trusted root: no certificate authority or no transparency log");
  return { authorities, logs, identities: options.identities };
}

interface TlogEntry {
  logIndex?: string | number;
  logId?: { keyId?: string };
  kindVersion?: { kind?: string; version?: string };
  integratedTime?: string | number;
  inclusionPromise?: { signedEntryTimestamp?: string };
  canonicalizedBody?: string;
}

/** The entry's SET checked with a trusted log's key; returns the logged time (ms). */
async function checkInclusion(entry: TlogEntry, trust: SigstoreTrust): Promise<number> {
  const time = Number(entry.integratedTime) * 1000;
  const keyId = toHex(base64(entry.logId?.keyId) ?? new Uint8Array());
  const set = base64(entry.inclusionPromise?.signedEntryTimestamp);
  if (!set || !entry.canonicalizedBody || !Number.isFinite(time)) return refuse("tlog-invalid", "the log entry has no inclusion promise (SET)");
  // Rekor signs the canonical JSON of these four fields (keys sorted, no spaces).
  const payload = JSON.stringify({ body: entry.canonicalizedBody, integratedTime: Number(entry.integratedTime), logID: keyId, logIndex: Number(entry.logIndex) });
  for (const log of trust.logs) {
    if (log.keyId !== keyId || !within(log.valid, time)) continue;
    if ((await log.key.verify(set, asciiBytes(payload), ["SHA-256"])) === "ok") return time;
  }
  return refuse("tlog-invalid", "the log entry's inclusion promise is signed by no trusted transparency log");
}

/** The signature (base64) and digest (hex) a logged body records, by its kind: hashedrekord 0.0.1, dsse 0.0.1, intoto 0.0.2. */
function loggedFields(kind: string, spec: Record<string, any>): { sig: unknown; digest: unknown } {
  switch (kind) {
    case "hashedrekord 0.0.1":
      return { sig: spec.signature?.content, digest: spec.data?.hash?.value };
    case "dsse 0.0.1":
      return { sig: spec.signatures?.length === 1 ? spec.signatures[0]?.signature : undefined, digest: spec.payloadHash?.value };
    case "intoto 0.0.2": {
      // Rekor's intoto entries hold the signature base64-encoded twice.
      const sigs = spec.content?.envelope?.signatures;
      const twice = base64(sigs?.length === 1 ? sigs[0]?.sig : undefined);
      return { sig: twice ? fromUtf8(twice) : undefined, digest: spec.content?.payloadHash?.value };
    }
    default:
      return { sig: undefined, digest: undefined };
  }
}

/** The logged body is about this signature: a kind for this content, the same signature, the same digest. */
function checkBody(entry: TlogEntry, content: KeylessContent): void {
  let body: { kind?: string; apiVersion?: string; spec?: Record<string, any> };
  try {
    body = JSON.parse(fromUtf8(base64(entry.canonicalizedBody) ?? new Uint8Array())) as typeof body;
  } catch {
    return refuse("tlog-invalid", "the log entry's body is not JSON");
  }
  const kind = `${String(body.kind)} ${String(body.apiVersion)}`;
  const fits = content.kind === "hashedrekord" ? kind === "hashedrekord 0.0.1" : kind === "dsse 0.0.1" || kind === "intoto 0.0.2";
  if (body.kind !== entry.kindVersion?.kind || body.apiVersion !== entry.kindVersion?.version || !fits) {
    return refuse("tlog-invalid", `the log entry is a ${kind} entry, which does not record a ${content.kind === "dsse" ? "DSSE envelope" : "message signature"}`);
  }
  const { sig, digest } = loggedFields(kind, body.spec ?? {});
  const logged = base64(sig);
  if (!logged || toHex(logged) !== toHex(content.sig)) refuse("tlog-invalid", "the log entry records another signature");
  if (digest !== toHex(content.digest)) refuse("tlog-invalid", "the log entry records another digest");
}

const OID_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8";
const OID_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1";

/** The certificate's OIDC issuer (Fulcio's extension) and subject (its SAN e-mail or URI). */
function identityOf(X: typeof X509, cert: X509.X509Certificate): SigstoreIdentity {
  let issuer = "";
  const v2 = cert.getExtension(OID_ISSUER_V2);
  const v1 = cert.getExtension(OID_ISSUER_V1);
  if (v2) {
    const der = new Uint8Array(v2.value);
    issuer = fromUtf8(der.subarray(der[1]! & 0x80 ? 2 + (der[1]! & 0x7f) : 2));
  } else if (v1) issuer = fromUtf8(new Uint8Array(v1.value));
  const san = cert.getExtension(X.SubjectAlternativeNameExtension);
  const name = san?.names.items.find((n) => n.type === "email" || n.type === "url");
  return { issuer, subject: name?.value ?? "" };
}

/** The leaf chains to a trusted CA that was valid at `time`, and every certificate of the path was valid then. */
async function checkChain(leaf: X509.X509Certificate, trust: SigstoreTrust, time: number): Promise<void> {
  let expired: string | undefined;
  for (const ca of trust.authorities) {
    if (!within(ca.valid, time) || ca.chain.length === 0) continue;
    const chain = await Promise.all(ca.chain.map((der) => certificate(der)));
    if (!(await isSignedBy(leaf, chain[0]!))) continue;
    const invalid = [leaf, ...chain].find((c) => time < c.notBefore.getTime() || time > c.notAfter.getTime());
    if (!invalid) return;
    expired = `certificate "${invalid.subject}" was not valid at the logged signing time ${new Date(time).toISOString()}`;
  }
  return expired ? refuse("expired-certificate", expired) : refuse("untrusted-chain", `the signing certificate of "${leaf.issuer}" chains to no trusted certificate authority`);
}

/** Verifies a keyless bundle's signer; returns the identity it was issued to. */
export async function verifyKeyless(bundle: Bundle, content: KeylessContent, trust: SigstoreTrust): Promise<SigstoreIdentity> {
  const material = bundle.verificationMaterial!;
  const raw = base64(material.certificate?.rawBytes ?? material.x509CertificateChain?.certificates?.[0]?.rawBytes);
  if (!raw) return refuse("malformed", "the bundle has no signing certificate");
  const X = await x509();
  let leaf: X509.X509Certificate;
  try {
    leaf = await certificate(raw);
  } catch {
    return refuse("malformed", "the signing certificate is not X.509 DER");
  }
  const entries = (material.tlogEntries ?? []) as TlogEntry[];
  if (entries.length === 0) return refuse("tlog-invalid", "the bundle has no transparency-log entry");
  if (entries.some((e) => !Number.isFinite(Number(e.integratedTime)))) return refuse("tlog-invalid", "a log entry has no integrated time");
  // As @sigstore/verify: the chain at the logged time first, then the entries that vouch for that time.
  for (const entry of entries) await checkChain(leaf, trust, Number(entry.integratedTime) * 1000);
  for (const entry of entries) {
    await checkInclusion(entry, trust);
    checkBody(entry, content);
  }
  const key = keyOf(new Uint8Array(leaf.publicKey.rawData));
  const result = await key.verify(content.sig, content.signed, sigstoreHashes(key));
  if (result === "malformed") refuse("bad-signature", "the signature is truncated or garbled");
  if (result === "no") refuse("wrong-key", "the signature does not verify with the signing certificate's key");
  const identity = identityOf(X, leaf);
  if (!trust.identities.some((i) => i.issuer === identity.issuer && i.subject === identity.subject)) {
    refuse("identity-mismatch", `the certificate was issued to ${identity.subject || "no subject"} by ${identity.issuer || "no issuer"}, not a configured identity`);
  }
  return identity;
}
