/** Signature artifacts for `verifySignatures` from a manifest and its blobs, read from a map as a store would. */
import type { SignatureArtifact } from "../../../src/trust/types.js";
import type { Blob } from "./cosign.js";

export function artifactOf(signed: { manifest: Blob; blobs: Blob[] }, tamper?: (digest: string, bytes: Uint8Array) => Uint8Array | undefined): SignatureArtifact {
  const blobs = new Map(signed.blobs.map((b) => [b.digest, new Uint8Array(b.bytes)]));
  return {
    manifest: new Uint8Array(signed.manifest.bytes),
    read: async (digest) => {
      const bytes = blobs.get(digest);
      return tamper && bytes ? tamper(digest, bytes) : bytes;
    },
  };
}
