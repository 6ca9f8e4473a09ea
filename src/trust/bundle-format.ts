/**
 * The fields of a sigstore bundle (v0.1-v0.3 JSON) that verification reads.
 *
 * @module
 */
/** The fields of a bundle the verifier reads. */
export interface Bundle {
  mediaType?: string;
  verificationMaterial?: {
    publicKey?: { hint?: string };
    certificate?: { rawBytes?: string };
    x509CertificateChain?: { certificates?: { rawBytes?: string }[] };
    tlogEntries?: unknown[];
  };
  messageSignature?: { messageDigest?: { algorithm?: string; digest?: string }; signature?: string };
  dsseEnvelope?: { payload?: string; payloadType?: string; signatures?: { sig?: string; keyid?: string }[] };
}
