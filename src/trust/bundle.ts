/**
 * sigstore bundles attached as OCI 1.1 referrers (cosign's
 * `application/vnd.dev.sigstore.bundle.v0.3+json`): a `messageSignature` over
 * the manifest's bytes or a DSSE envelope whose in-toto statement names the
 * manifest's digest, signed with a configured key (offline) or keyless, by a
 * Fulcio certificate checked in `keyless.ts`.
 *
 * @module
 */
import { asciiBytes, concatBytes, fromHex, toHex, utf8 } from "../util/bytes.js";
import { digestOf, parseJson, readBlob, type Descriptor } from "./artifact.js";
import { base64, findSigner } from "./cosign.js";
import { sigstoreHashes, type PublicKey } from "./keys.js";
import { verifyKeyless, type KeylessContent } from "./keyless.js";
import { refuse } from "./refusal.js";
import type { TrustContext } from "./context.js";
import type { Bundle } from "./bundle-format.js";
import type { AcceptedSignature, SignatureArtifact, VerifyInput } from "./types.js";

export { loadSigstore, type SigstoreTrust } from "./keyless.js";
export type { Bundle } from "./bundle-format.js";

/** Whether `mediaType` names a sigstore bundle (any version, either spelling). */
export function isBundleType(mediaType: string): boolean {
  return mediaType.startsWith("application/vnd.dev.sigstore.bundle");
}


const IN_TOTO = "application/vnd.in-toto+json";

/** DSSE's pre-authentication encoding of a payload. */
export function pae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = utf8(payloadType);
  return concatBytes([asciiBytes(`DSSEv1 ${type.length} `), type, asciiBytes(` ${payload.length} `), payload]);
}

/** What the bundle signs, checked to be about `input.digest`. */
async function signedContent(bundle: Bundle, input: VerifyInput): Promise<KeylessContent> {
  const hex = input.digest.slice(input.digest.indexOf(":") + 1);
  if (bundle.messageSignature) {
    const { messageDigest, signature } = bundle.messageSignature;
    const claimed = base64(messageDigest?.digest);
    if (messageDigest?.algorithm !== "SHA2_256" || !claimed) return refuse("malformed", "the bundle's messageDigest is not a SHA2_256 digest");
    if (toHex(claimed) !== hex) return refuse("digest-mismatch", `the signature is for sha256:${toHex(claimed)}, not ${input.digest}`);
    if (!input.manifest) return refuse("unsupported", "a messageSignature bundle is checked over the manifest's bytes, which the caller did not give");
    if ((await digestOf(input.manifest)) !== input.digest) return refuse("malformed", `the manifest bytes given do not have the digest ${input.digest}`);
    const sig = base64(signature) ?? refuse("bad-signature", "the bundle's signature is not base64");
    return { signed: input.manifest, sig, digest: fromHex(hex), kind: "hashedrekord" };
  }
  const env = bundle.dsseEnvelope;
  if (!env) return refuse("malformed", "the bundle has neither messageSignature nor dsseEnvelope");
  const payload = base64(env.payload) ?? refuse("malformed", "the DSSE payload is not base64");
  if (env.payloadType !== IN_TOTO) return refuse("unsupported", `DSSE payload type ${String(env.payloadType)}`);
  if (!Array.isArray(env.signatures) || env.signatures.length !== 1) return refuse("malformed", "the DSSE envelope does not carry exactly one signature");
  const sig = base64(env.signatures[0]?.sig) ?? refuse("bad-signature", "the DSSE signature is not base64");
  const statement = parseJson(payload, "in-toto statement") as { subject?: { digest?: { sha256?: unknown } }[] };
  const subjects = Array.isArray(statement?.subject) ? statement.subject.map((s) => s?.digest?.sha256) : [];
  if (!subjects.includes(hex)) return refuse("digest-mismatch", `the statement's subjects (${subjects.map((s) => `sha256:${String(s)}`).join(", ")}) do not include ${input.digest}`);
  const payloadDigest = await crypto.subtle.digest("SHA-256", payload.slice().buffer);
  return { signed: pae(env.payloadType, payload), sig, digest: new Uint8Array(payloadDigest), kind: "dsse" };
}

/** The configured keys a bundle's `publicKey.hint` allows: that key alone when it names one, else all. */
function keysFor(hint: string | undefined, keys: ReadonlyMap<string, PublicKey>): ReadonlyMap<string, PublicKey> {
  const named = hint === undefined ? undefined : keys.get(hint);
  return named ? new Map([[hint!, named]]) : keys;
}

/** Verifies one bundle layer for `input.digest`: with a configured key, or keyless against the sigstore root. */
export async function verifyBundle(
  artifact: SignatureArtifact,
  layer: Descriptor,
  input: VerifyInput,
  ctx: TrustContext,
): Promise<Pick<AcceptedSignature, "by" | "identity">> {
  const bundle = parseJson(await readBlob(artifact, layer), "sigstore bundle") as Bundle;
  if (typeof bundle !== "object" || bundle === null || typeof bundle.verificationMaterial !== "object") {
    return refuse("malformed", "the sigstore bundle has no verificationMaterial");
  }
  const content = await signedContent(bundle, input);
  const material = bundle.verificationMaterial;
  if (material.publicKey) {
    return { by: await findSigner(keysFor(material.publicKey.hint, ctx.keys), content.sig, content.signed, sigstoreHashes) };
  }
  if (!ctx.sigstore) return refuse("not-configured", "a keyless bundle, and no sigstore trusted root is configured");
  const identity = await verifyKeyless(bundle, content, ctx.sigstore);
  return { by: `${identity.issuer} ${identity.subject}`, identity };
}
