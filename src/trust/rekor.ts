/**
 * A Rekor transparency-log entry of a keyless bundle, checked offline the
 * way `@sigstore/verify` does: its signed entry timestamp (SET) when it has
 * one, its inclusion proof against a signed checkpoint (RFC 9162 §2.1.3.2,
 * transparency-dev's checkpoint format) when it has one, at least one of the
 * two, and a body that records this very signature and digest.
 *
 * @module
 */
import { asciiBytes, concatBytes, equalBytes, fromUtf8, toArrayBuffer, toHex, utf8 } from "../util/bytes.js";
import { base64 } from "./cosign.js";
import type { PublicKey } from "./keys.js";
import { refuse } from "./refusal.js";

/** A transparency log of the trusted root. */
export interface TrustedLog {
  keyId: string;
  key: PublicKey;
  baseUrl: string;
  valid: { start?: number; end?: number };
}

/** The fields of a bundle's `tlogEntries[]` item that are checked. */
export interface TlogEntry {
  logIndex?: string | number;
  logId?: { keyId?: string };
  kindVersion?: { kind?: string; version?: string };
  integratedTime?: string | number;
  inclusionPromise?: { signedEntryTimestamp?: string };
  inclusionProof?: { logIndex?: string | number; hashes?: string[]; checkpoint?: { envelope?: string } };
  canonicalizedBody?: string;
}

/** What the entry must record: the signature and the digest of what was signed. */
export interface LoggedContent {
  sig: Uint8Array;
  digest: Uint8Array;
  kind: "hashedrekord" | "dsse";
}

const within = (v: TrustedLog["valid"], t: number) => (v.start === undefined || v.start <= t) && (v.end === undefined || t <= v.end);

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", toArrayBuffer(concatBytes(parts))));
}

/** The SET: a trusted log's signature over the canonical JSON of body, time, log id and index. */
async function checkPromise(entry: TlogEntry, set: Uint8Array, logs: readonly TrustedLog[]): Promise<void> {
  const time = Number(entry.integratedTime) * 1000;
  const keyId = toHex(base64(entry.logId?.keyId) ?? new Uint8Array());
  // Rekor signs these four fields with keys sorted and no spaces, which is what JSON.stringify writes here.
  const payload = JSON.stringify({ body: entry.canonicalizedBody, integratedTime: Number(entry.integratedTime), logID: keyId, logIndex: Number(entry.logIndex) });
  for (const log of logs) {
    if (log.keyId !== keyId || !within(log.valid, time)) continue;
    if ((await log.key.verify(set, asciiBytes(payload), ["SHA-256"])) === "ok") return;
  }
  refuse("tlog-invalid", "the log entry's inclusion promise is signed by no trusted transparency log");
}

/** A checkpoint signed by a trusted log: its tree size and root hash. */
async function checkpointOf(envelope: string, logs: readonly TrustedLog[]): Promise<{ size: bigint; root: Uint8Array }> {
  const split = envelope.indexOf("\n\n");
  if (split < 0) return refuse("tlog-invalid", "the checkpoint has no signature block");
  const note = envelope.slice(0, split + 1);
  let signed = false;
  for (const [, name, sigText] of envelope.slice(split + 2).matchAll(/\u2014 (\S+) (\S+)\n/g)) {
    const bytes = base64(sigText);
    if (!bytes || bytes.length < 5) continue;
    const hint = toHex(bytes.subarray(0, 4));
    for (const log of logs) {
      if (!log.keyId.startsWith(hint) || !log.baseUrl.includes(name!)) continue;
      if ((await log.key.verify(bytes.subarray(4), utf8(note), ["SHA-256"])) === "ok") signed = true;
    }
  }
  if (!signed) return refuse("tlog-invalid", "the checkpoint is signed by no trusted transparency log");
  const [, sizeText, rootText] = note.trimEnd().split("\n");
  const root = base64(rootText);
  if (!sizeText || !/^\d+$/.test(sizeText) || !root) return refuse("tlog-invalid", "the checkpoint's size or root hash is malformed");
  return { size: BigInt(sizeText), root };
}

/** The root an inclusion proof leads to from `leaf` at `index` in a tree of `size` (RFC 9162 §2.1.3.2), or `undefined`. */
async function rootFromProof(leaf: Uint8Array, index: bigint, size: bigint, path: Uint8Array[]): Promise<Uint8Array | undefined> {
  if (index >= size) return undefined;
  let fn = index;
  let sn = size - 1n;
  let r = leaf;
  const NODE = Uint8Array.of(1);
  for (const p of path) {
    if (sn === 0n) return undefined;
    if ((fn & 1n) === 1n || fn === sn) {
      r = await sha256(NODE, p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await sha256(NODE, r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n ? r : undefined;
}

async function checkProof(entry: TlogEntry, logs: readonly TrustedLog[]): Promise<void> {
  const proof = entry.inclusionProof!;
  const checkpoint = await checkpointOf(proof.checkpoint?.envelope ?? "", logs);
  const path = (proof.hashes ?? []).map((h) => base64(h) ?? new Uint8Array());
  // protobuf's JSON leaves a zero index out
  const indexText = String(proof.logIndex ?? "0");
  const index = /^\d+$/.test(indexText) ? BigInt(indexText) : -1n;
  const leaf = await sha256(Uint8Array.of(0), base64(entry.canonicalizedBody) ?? new Uint8Array());
  const root = index < 0n ? undefined : await rootFromProof(leaf, index, checkpoint.size, path);
  if (!root || !equalBytes(root, checkpoint.root)) refuse("tlog-invalid", "the inclusion proof does not lead to the checkpoint's root hash");
}

/** The signature (base64) and digest (hex) a body records, by kind: hashedrekord 0.0.1, dsse 0.0.1, intoto 0.0.2. */
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
function checkBody(entry: TlogEntry, content: LoggedContent): void {
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
  if (!logged || !equalBytes(logged, content.sig)) refuse("tlog-invalid", "the log entry records another signature");
  if (digest !== toHex(content.digest)) refuse("tlog-invalid", "the log entry records another digest");
}

/** Checks one entry: its SET and/or inclusion proof (at least one), then its body. */
export async function checkEntry(entry: TlogEntry, content: LoggedContent, logs: readonly TrustedLog[]): Promise<void> {
  if (!entry.canonicalizedBody) return refuse("tlog-invalid", "the log entry has no body");
  const set = base64(entry.inclusionPromise?.signedEntryTimestamp);
  if (entry.inclusionPromise && !set) refuse("tlog-invalid", "the log entry's inclusion promise is not base64");
  if (set) await checkPromise(entry, set, logs);
  if (entry.inclusionProof) await checkProof(entry, logs);
  if (!set && !entry.inclusionProof) refuse("tlog-invalid", "the log entry has neither an inclusion promise nor an inclusion proof");
  checkBody(entry, content);
}
