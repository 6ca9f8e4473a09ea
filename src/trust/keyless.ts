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
import { fromUtf8, toHex } from "../util/bytes.js";
import { x509, type X509 } from "../util/x509.js";
import { certificate, isSignedBy } from "./certificates.js";
import { base64 } from "./cosign.js";
import { PublicKey, sigstoreHashes } from "./keys.js";
import { keyOf } from "./notation.js";
import { refuse } from "./refusal.js";
import { checkScts, type TrustedCtLog } from "./sct.js";
import { checkEntry, type LoggedContent, type TlogEntry, type TrustedLog } from "./rekor.js";
import type { Bundle } from "./bundle-format.js";
import type { SigstoreIdentity, SigstoreOptions } from "./types.js";

/** What a bundle signs: the signed bytes, the signature, and the digest the log entry records. */
export interface KeylessContent extends LoggedContent {
  signed: Uint8Array;
}

interface Validity {
  start?: number;
  end?: number;
}

/** The parts of a trusted root the verifier uses, decoded once. */
export interface SigstoreTrust {
  authorities: { chain: Uint8Array[]; valid: Validity }[];
  logs: TrustedLog[];
  ctLogs: TrustedCtLog[];
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
  ctlogs?: { logId?: { keyId?: string }; publicKey?: { rawBytes?: string; validFor?: { start?: string; end?: string } } }[];
  tlogs?: { baseUrl?: string; logId?: { keyId?: string }; publicKey?: { rawBytes?: string; validFor?: { start?: string; end?: string } } }[];
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
    baseUrl: log.baseUrl ?? "",
    valid: validity(log.publicKey?.validFor),
  }));
  const ctLogs = (root?.ctlogs ?? []).map((log) => ({
    keyId: toHex(base64(log.logId?.keyId) ?? new Uint8Array()),
    key: new PublicKey(base64(log.publicKey?.rawBytes) ?? new Uint8Array()),
    valid: validity(log.publicKey?.validFor),
  }));
  if (authorities.length === 0 || logs.length === 0) throw new Error("sigstore trusted root: no certificate authority or no transparency log");
  return { authorities, logs, ctLogs, identities: options.identities };
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

/**
 * The leaf chains to a trusted CA that was valid at `time`, and every
 * certificate of the path was valid then; returns the issuer's SPKI.
 */
async function checkChain(leaf: X509.X509Certificate, trust: SigstoreTrust, time: number): Promise<Uint8Array> {
  let expired: string | undefined;
  for (const ca of trust.authorities) {
    if (!within(ca.valid, time) || ca.chain.length === 0) continue;
    const chain = await Promise.all(ca.chain.map((der) => certificate(der)));
    if (!(await isSignedBy(leaf, chain[0]!))) continue;
    const invalid = [leaf, ...chain].find((c) => time < c.notBefore.getTime() || time > c.notAfter.getTime());
    if (!invalid) return new Uint8Array(chain[0]!.publicKey.rawData);
    expired = `certificate "${invalid.subject}" was not valid at the logged signing time ${new Date(time).toISOString()}`;
  }
  return expired ? refuse("expired-certificate", expired) : refuse("untrusted-chain", `the signing certificate of "${leaf.issuer}" chains to no trusted certificate authority`);
}

/** What a bundle's version requires of its entries: an inclusion promise in v0.1, an inclusion proof from v0.2 on. */
function checkEntryForm(mediaType: string | undefined, entries: readonly TlogEntry[]): void {
  const v01 = mediaType === "application/vnd.dev.sigstore.bundle+json;version=0.1";
  const missing = entries.some((e) => (v01 ? !e.inclusionPromise : !e.inclusionProof));
  if (missing) refuse("malformed", `a log entry lacks the inclusion ${v01 ? "promise" : "proof"} a ${mediaType ?? "bundle"} must have`);
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
  if (entries.length > 8) return refuse("malformed", `the bundle has ${entries.length} log entries, more than 8`);
  checkEntryForm(bundle.mediaType, entries);
  // As @sigstore/verify: only an entry's SET vouches for its time (timestamp authorities are not
  // read); the chain is checked at those times first, then the entries themselves.
  const times = entries.filter((e) => e.inclusionPromise).map((e) => Number(e.integratedTime) * 1000);
  if (times.length === 0 || times.some((t) => !Number.isFinite(t))) return refuse("tlog-invalid", "no log entry gives a signed signing time (an inclusion promise)");
  let issuerSpki: Uint8Array = new Uint8Array();
  for (const time of times) issuerSpki = await checkChain(leaf, trust, time);
  await checkScts(raw, issuerSpki, trust.ctLogs);
  for (const entry of entries) await checkEntry(entry, content, trust.logs);
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
