/**
 * cosign's simple-signing signatures, as containers/image and cosign write
 * them: a layer `application/vnd.dev.cosign.simplesigning.v1+json` whose
 * bytes are the payload and whose `dev.cosignproject.cosign/signature`
 * annotation is the base64 signature over exactly those bytes. Found under
 * the `sha256-<hex>.sig` tag or as an OCI 1.1 referrer.
 *
 * @module
 */
import { fromB64 } from "../util/bytes.js";
import { parseJson, readBlob, type Descriptor } from "./artifact.js";
import { cosignHashes, type HashName, type PublicKey } from "./keys.js";
import { refuse } from "./refusal.js";
import type { SignatureArtifact } from "./types.js";

/** The media type of a simple-signing payload layer. */
export const SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json";
/** The annotation that holds the signature. */
export const SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
/** The `critical.type` every cosign payload carries. */
export const COSIGN_TYPE = "cosign container image signature";

/** A standard base64 value decoded, or `undefined` when it is not base64 (or empty). */
export function base64(text: unknown): Uint8Array | undefined {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  try {
    const bytes = fromB64(text);
    return bytes.length > 0 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Which of `keys` signed `data` with `sig`: its name, or a refusal
 * (`bad-signature` when no key could read it, `wrong-key` when none verifies it).
 */
export async function findSigner(
  keys: ReadonlyMap<string, PublicKey>,
  sig: Uint8Array,
  data: Uint8Array,
  hashes: (key: PublicKey) => readonly HashName[],
): Promise<string> {
  if (keys.size === 0) return refuse("not-configured", "no public keys are configured");
  let wellFormed = false;
  for (const [name, key] of keys) {
    const result = await key.verify(sig, data, hashes(key));
    if (result === "ok") return name;
    if (result === "no") wellFormed = true;
  }
  return wellFormed
    ? refuse("wrong-key", "the signature verifies with none of the configured keys (another key made it, or the signed bytes were altered)")
    : refuse("bad-signature", "the signature is truncated or garbled: it cannot be a signature of any configured key");
}

/** The digest a simple-signing payload claims, or a `malformed` refusal. */
function claimedDigest(payload: unknown): string {
  const critical = (payload as { critical?: { type?: unknown; image?: { "docker-manifest-digest"?: unknown } } })?.critical;
  if (typeof critical !== "object" || critical === null) return refuse("malformed", "the payload has no `critical` section");
  if (critical.type !== COSIGN_TYPE) return refuse("malformed", `the payload's critical.type is not "${COSIGN_TYPE}"`);
  const digest = critical.image?.["docker-manifest-digest"];
  if (typeof digest !== "string") return refuse("malformed", "the payload has no critical.image.docker-manifest-digest");
  return digest;
}

/**
 * Verifies one simple-signing layer for `digest`: the payload read and
 * hashed, the signature checked with the configured keys, then the digest
 * the payload claims compared with `digest`. Returns the signing key's name.
 */
export async function verifySimpleSigning(
  artifact: SignatureArtifact,
  layer: Descriptor,
  digest: string,
  keys: ReadonlyMap<string, PublicKey>,
): Promise<string> {
  const sigText = layer.annotations?.[SIGNATURE_ANNOTATION];
  if (sigText === undefined) return refuse("malformed", `the layer has no ${SIGNATURE_ANNOTATION} annotation`);
  const sig = base64(sigText);
  if (!sig) return refuse("bad-signature", `the ${SIGNATURE_ANNOTATION} annotation is not base64`);
  const payload = await readBlob(artifact, layer);
  const by = await findSigner(keys, sig, payload, cosignHashes);
  const claimed = claimedDigest(parseJson(payload, "simple-signing payload"));
  if (claimed !== digest) return refuse("digest-mismatch", `the signature is for ${claimed}, not ${digest}`);
  return by;
}
