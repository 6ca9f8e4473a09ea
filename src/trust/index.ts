/**
 * `registry-kit/trust`: signature verification for container images with Web
 * Crypto only, so it runs the same on Node, Bun, Deno and Workers. It checks
 * cosign simple-signing signatures (the `sha256-<hex>.sig` tag scheme and OCI
 * 1.1 referrers), sigstore bundles (with a key, or keyless against a trusted
 * root and identities) and notation JWS envelopes (against X.509 trust
 * stores), and gives one verdict per signature with its reason code when
 * refused. docs/signatures.md describes what is verified.
 *
 * @module
 */
export { createTrust } from "./trust.js";
export { signatureTag } from "./tag.js";
export type {
  AcceptedSignature,
  RefusalReason,
  RefusedSignature,
  SignatureArtifact,
  SignatureKind,
  SignatureVerdict,
  SigstoreIdentity,
  SigstoreOptions,
  Trust,
  TrustOptions,
  VerdictPlace,
  VerifyInput,
} from "./types.js";
