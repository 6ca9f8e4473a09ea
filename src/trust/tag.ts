/**
 * Where cosign and containers/image put a manifest's simple-signing
 * signatures: the tag `sha256-<hex>.sig` in the same repository.
 *
 * @module
 */
import { tryParseDigest } from "../oci/digest.js";

/** The tag holding the signatures of the manifest `digest` (`sha256:<hex>` → `sha256-<hex>.sig`); `undefined` for a malformed digest. */
export function signatureTag(digest: string): string | undefined {
  const d = tryParseDigest(digest);
  return d ? `${d.algorithm}-${d.hex}.sig` : undefined;
}
