/**
 * The vocabulary of signature verification: what a caller hands in (the
 * signed manifest's digest and the signature artifacts found for it) and the
 * verdict on each signature.
 *
 * @module
 */

/** The kinds of signature registry-kit verifies. */
export type SignatureKind = "cosign" | "sigstore-bundle" | "notation";

/**
 * Why a signature was refused; each failure has its own code (docs/signatures.md).
 *
 * - `unsupported`: the artifact is no signature kind registry-kit knows, or uses an algorithm it does not verify.
 * - `not-configured`: a signature of a kind for which no trust (keys, notation roots, sigstore root) is configured.
 * - `malformed`: the manifest, payload, bundle or envelope is not what its kind prescribes.
 * - `blob-mismatch`: a blob read for the artifact does not hash to the digest its descriptor names.
 * - `digest-mismatch`: the signed payload names another manifest digest than the one verified.
 * - `bad-signature`: the signature bytes cannot be a signature at all (bad base64, truncated, broken DER, wrong length).
 * - `wrong-key`: a well-formed signature that no trusted key verifies (another key made it, or the signed bytes were altered).
 * - `expired-certificate`: a certificate of the chain is not valid at the time that counts (now, or the logged signing time).
 * - `expired-signature`: a notation envelope past its own `io.cncf.notary.expiry`.
 * - `untrusted-chain`: the certificate chain does not lead to a configured root.
 * - `identity-mismatch`: a keyless certificate whose issuer and subject match none of the configured identities.
 * - `tlog-invalid`: a keyless bundle's transparency-log entry is missing, not signed by a trusted log, or not about this signature.
 * - `sct-invalid`: a keyless certificate without a signed certificate timestamp from a trusted CT log, or with a bad one.
 */
export type RefusalReason =
  | "unsupported"
  | "not-configured"
  | "malformed"
  | "blob-mismatch"
  | "digest-mismatch"
  | "bad-signature"
  | "wrong-key"
  | "expired-certificate"
  | "expired-signature"
  | "untrusted-chain"
  | "identity-mismatch"
  | "tlog-invalid"
  | "sct-invalid";

/** Where a verdict's signature sits: which artifact of the input and which layer of its manifest. */
export interface VerdictPlace {
  /** Index into {@link VerifyInput.signatures}. */
  artifact: number;
  /** Index of the layer in the artifact's manifest (a `.sig` manifest may carry several signatures). */
  layer: number;
}

/** A signature that verified. */
export interface AcceptedSignature extends VerdictPlace {
  /** Verified. */
  ok: true;
  /** What kind of signature it is. */
  kind: SignatureKind;
  /**
   * Who signed: the configured key's name (cosign, sigstore bundle with a key), the
   * notation trust store's name, or `issuer subject` of a keyless identity.
   */
  by: string;
  /** For keyless signatures: the certificate's OIDC issuer and subject. */
  identity?: { issuer: string; subject: string };
}

/** A signature that was refused, with its reason code and a sentence for people. */
export interface RefusedSignature extends VerdictPlace {
  /** Refused. */
  ok: false;
  /** The kind, when the artifact was recognised. */
  kind?: SignatureKind;
  /** The reason code (docs/signatures.md lists them). */
  reason: RefusalReason;
  /** One sentence for people: what was found, what was expected. */
  detail: string;
}

/** The verdict on one signature. */
export type SignatureVerdict = AcceptedSignature | RefusedSignature;

/**
 * One signature artifact: a manifest found for the verified image (under its
 * `sha256-<hex>.sig` tag or among its referrers) and a way to read its blobs.
 */
export interface SignatureArtifact {
  /** The artifact's manifest, exactly as stored. */
  manifest: Uint8Array;
  /**
   * Reads a blob of that manifest by digest (a layer, the payload). The bytes
   * are hashed and compared with the digest before use; returning `undefined`
   * means the blob is missing.
   */
  read: (digest: string) => Promise<Uint8Array | undefined>;
}

/** What {@link Trust.verifySignatures} checks. */
export interface VerifyInput {
  /** The digest of the manifest whose signatures are checked, `sha256:<hex>`. */
  digest: string;
  /**
   * That manifest's bytes: needed only for sigstore bundles whose
   * `messageSignature` signs the manifest itself (hashed and compared with `digest`).
   */
  manifest?: Uint8Array;
  /** The signature artifacts found for it (the `.sig` tag's manifest, referrers). */
  signatures: readonly SignatureArtifact[];
}

/** A keyless signer the policy accepts: the certificate's OIDC issuer and subject (SAN). */
export interface SigstoreIdentity {
  /** The OIDC issuer, e.g. `https://token.actions.githubusercontent.com`. */
  issuer: string;
  /** The subject alternative name (an e-mail or URI) exactly. */
  subject: string;
}

/** Keyless sigstore verification settings. */
export interface SigstoreOptions {
  /**
   * The trusted root: the JSON of a sigstore `TrustedRoot`
   * (`application/vnd.dev.sigstore.trustedroot+json;version=0.1`): its
   * `certificateAuthorities` (Fulcio) and `tlogs` (Rekor) are used.
   */
  trustedRoot: unknown;
  /** The identities whose certificates are accepted. */
  identities: readonly SigstoreIdentity[];
}

/** The trust configuration of {@link createTrust}. */
export interface TrustOptions {
  /** Public keys by name, PEM (`PUBLIC KEY`): ECDSA P-256/P-384, Ed25519, RSA. */
  keys?: Readonly<Record<string, string>>;
  /** Notation trust stores by name: each a list of PEM root certificates. */
  notation?: Readonly<Record<string, readonly string[]>>;
  /** Keyless sigstore bundles: the trusted root and the accepted identities. */
  sigstore?: SigstoreOptions;
  /** The clock (tests); certificates of notation chains are checked at this time. */
  now?: () => Date;
}

/** A configured verifier; see {@link createTrust}. */
export interface Trust {
  /**
   * Verifies every signature of every artifact against the configuration and
   * returns one verdict per signature (never throws for bad input).
   */
  verifySignatures(input: VerifyInput): Promise<SignatureVerdict[]>;
  /** The names of the configured keys and notation trust stores. */
  readonly names: readonly string[];
}
