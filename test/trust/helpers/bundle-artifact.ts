/** sigstore bundles as OCI 1.1 referrers, the manifest cosign (`--new-bundle-format`) and @sigstore/oci attach. */
import { blobOf, type Blob } from "./cosign.js";

export const BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";

export function bundleManifest(bundle: unknown, subject: { digest: string; size: number; mediaType: string }): { manifest: Blob; blobs: Blob[] } {
  const layer = blobOf(JSON.stringify(bundle));
  const empty = blobOf("{}");
  const dsse = typeof bundle === "object" && bundle !== null && "dsseEnvelope" in bundle;
  const manifest = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    artifactType: BUNDLE_TYPE,
    config: { mediaType: "application/vnd.oci.empty.v1+json", digest: empty.digest, size: 2 },
    layers: [{ mediaType: BUNDLE_TYPE, digest: layer.digest, size: layer.bytes.length }],
    subject,
    annotations: { "dev.sigstore.bundle.content": dsse ? "dsse-envelope" : "message-signature" },
  };
  return { manifest: blobOf(JSON.stringify(manifest)), blobs: [layer, empty] };
}

/** The in-toto statement cosign signs for an image: the manifest digest as its subject. */
export function statement(name: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      _type: "https://in-toto.io/Statement/v1",
      subject: [{ name, digest: { sha256: digest.slice("sha256:".length) } }],
      predicateType: "https://sigstore.dev/cosign/sign/v1",
      predicate: {},
    }),
  );
}
