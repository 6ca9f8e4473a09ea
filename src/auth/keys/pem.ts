/**
 * PEM armour: splitting a PEM text into its labelled DER blocks, and writing
 * DER back as PEM.
 *
 * @module
 */
import { AuthError } from "../errors.js";
import { b64, fromB64 } from "../../util/bytes.js";

/** One `-----BEGIN <label>----- … -----END <label>-----` block. */
export interface PemBlock {
  /** The text after `BEGIN`, e.g. `CERTIFICATE`. */
  label: string;
  /** The decoded base64 content. */
  der: Uint8Array;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/**
 * Every PEM block in `text`, in order. Text between blocks (comments,
 * `openssl x509 -text` output) is ignored. Throws when a block's body is not base64.
 */
export function parsePem(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const label = m[1]!;
    const body = m[2]!;
    if (/^[A-Za-z-]+:/m.test(body)) throw new AuthError("invalid_key", `PEM block "${label}" has headers (encrypted keys are not supported)`);
    const der = fromB64(body.replace(/\s+/g, ""));
    blocks.push({ label, der });
  }
  return blocks;
}

/** Encode DER bytes as a PEM block with 64-character lines. */
export function toPem(label: string, der: Uint8Array): string {
  const body = b64(der).replace(/(.{64})/g, "$1\n").replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}
