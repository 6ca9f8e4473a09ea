/**
 * Digest syntax: `algorithm:encoded`, with the algorithms registry-kit can
 * verify (sha256, sha512). Anything else is refused before it reaches
 * authorization or storage.
 *
 * @module
 */
import { RegistryError } from "./errors.js";

/** The digest algorithms registry-kit computes and verifies. */
export type DigestAlgorithm = "sha256" | "sha512";

/** A digest that passed `parseDigest`: its algorithm is supported and its hex well formed. */
export interface Digest {
  /** `sha256` or `sha512`. */
  algorithm: DigestAlgorithm;
  /** Lowercase hex, 64 (sha256) or 128 (sha512) characters. */
  hex: string;
  /** The canonical string form, `algorithm:hex`. */
  value: string;
}

// The distribution-spec's general digest grammar; algorithm support is checked after.
const GRAMMAR = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;
const HEX = { sha256: /^[0-9a-f]{64}$/, sha512: /^[0-9a-f]{128}$/ } as const;

/** Parse a digest, or `undefined` when it is malformed or its algorithm unsupported. */
export function tryParseDigest(value: string): Digest | undefined {
  if (value.length > 256 || !GRAMMAR.test(value)) return undefined;
  const colon = value.indexOf(":");
  const algorithm = value.slice(0, colon);
  const hex = value.slice(colon + 1);
  if (algorithm !== "sha256" && algorithm !== "sha512") return undefined;
  if (!HEX[algorithm].test(hex)) return undefined;
  return { algorithm, hex, value };
}

/** Parse a digest or throw `DIGEST_INVALID` (400). */
export function parseDigest(value: string): Digest {
  const digest = tryParseDigest(value);
  if (!digest) {
    const known = /^(sha256|sha512):/.test(value);
    throw new RegistryError("DIGEST_INVALID", known ? "invalid digest" : "invalid digest or unsupported digest algorithm", 400, {
      digest: value.slice(0, 300),
    });
  }
  return digest;
}
