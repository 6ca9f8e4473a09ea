/**
 * `createTrust`: the configured keys, notation trust stores and sigstore
 * root, and `verifySignatures`, which sorts each artifact to its kind and
 * turns every check into one verdict per signature.
 *
 * @module
 */
import { parseManifest, type ArtifactManifest, type Descriptor } from "./artifact.js";
import { SIMPLE_SIGNING, verifySimpleSigning } from "./cosign.js";
import { PublicKey } from "./keys.js";
import { NOTATION_ARTIFACT, NOTATION_ENVELOPE, loadTrustStores, verifyNotation, type TrustStore } from "./notation.js";
import { Refusal } from "./refusal.js";
import type { TrustContext } from "./context.js";
import { isBundleType, loadSigstore, verifyBundle, type SigstoreTrust } from "./bundle.js";
import type { SignatureArtifact, SignatureKind, SignatureVerdict, Trust, TrustOptions, VerifyInput } from "./types.js";

/** Signatures one artifact may carry: each costs a verification, and cosign writes one layer per signer. */
export const MAX_LAYERS = 64;

export type { TrustContext } from "./context.js";

/** The kind of signature a layer of `m` carries, or `undefined` for none registry-kit knows. */
function kindOf(m: ArtifactManifest, layer: Descriptor): SignatureKind | undefined {
  if (layer.mediaType === SIMPLE_SIGNING) return "cosign";
  if (layer.mediaType === NOTATION_ENVELOPE && (m.artifactType ?? m.config?.mediaType) === NOTATION_ARTIFACT) return "notation";
  if (isBundleType(layer.mediaType)) return "sigstore-bundle";
  return undefined;
}

async function verifyLayer(ctx: TrustContext, input: VerifyInput, artifact: SignatureArtifact, kind: SignatureKind, layer: Descriptor) {
  switch (kind) {
    case "cosign":
      return { by: await verifySimpleSigning(artifact, layer, input.digest, ctx.keys) };
    case "notation":
      return { by: await verifyNotation(artifact, layer, input.digest, ctx.stores, ctx.now()) };
    case "sigstore-bundle":
      return verifyBundle(artifact, layer, input, ctx);
  }
}

async function verifyArtifact(ctx: TrustContext, input: VerifyInput, index: number): Promise<SignatureVerdict[]> {
  const artifact = input.signatures[index]!;
  let manifest: ArtifactManifest;
  try {
    manifest = parseManifest(artifact.manifest);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return [{ ok: false, artifact: index, layer: 0, reason: err.reason, detail: err.message }];
  }
  if (manifest.layers.length > MAX_LAYERS) {
    return [{ ok: false, artifact: index, layer: 0, reason: "malformed", detail: `the signature manifest has ${manifest.layers.length} layers, more than ${MAX_LAYERS}` }];
  }
  const verdicts: SignatureVerdict[] = [];
  for (const [layer, descriptor] of manifest.layers.entries()) {
    const kind = kindOf(manifest, descriptor);
    if (!kind) continue;
    try {
      const accepted = await verifyLayer(ctx, input, artifact, kind, descriptor);
      verdicts.push({ ok: true, artifact: index, layer, kind, ...accepted });
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      verdicts.push({ ok: false, artifact: index, layer, kind, reason: err.reason, detail: err.message });
    }
  }
  if (verdicts.length === 0) {
    const type = manifest.artifactType ?? manifest.config?.mediaType ?? "no artifactType";
    verdicts.push({ ok: false, artifact: index, layer: 0, reason: "unsupported", detail: `no signature layer registry-kit verifies (${type})` });
  }
  return verdicts;
}

/**
 * Makes a signature verifier from PEM keys, notation trust stores and a
 * sigstore trusted root. Keys and certificates are parsed now (a bad PEM
 * throws here, naming it); Web Crypto imports happen on first use and are kept.
 *
 * @example
 * ```ts
 * const trust = createTrust({ keys: { release: pem } });
 * const verdicts = await trust.verifySignatures({ digest, signatures: [{ manifest, read }] });
 * const signed = verdicts.some((v) => v.ok && v.by === "release");
 * ```
 */
export function createTrust(options: TrustOptions = {}): Trust {
  const keys = new Map<string, PublicKey>();
  for (const [name, pem] of Object.entries(options.keys ?? {})) {
    try {
      keys.set(name, PublicKey.fromPem(pem));
    } catch (err) {
      throw new Error(`trust key "${name}": ${(err as Error).message}`);
    }
  }
  const ctx: TrustContext = {
    keys,
    stores: loadTrustStores(options.notation ?? {}),
    sigstore: options.sigstore ? loadSigstore(options.sigstore) : undefined,
    now: options.now ?? (() => new Date()),
  };
  return {
    names: [...keys.keys(), ...ctx.stores.map((s) => s.name)],
    async verifySignatures(input) {
      const all = await Promise.all(input.signatures.map((_, i) => verifyArtifact(ctx, input, i)));
      return all.flat();
    },
  };
}
