/**
 * Parsed X.509 certificates, kept by their DER: `@peculiar/x509` takes a few
 * milliseconds to parse one, and a notation signer's chain or a trust store's
 * root comes back with every signature it makes.
 *
 * @module
 */
import { toArrayBuffer, toHex } from "../util/bytes.js";
import { x509, type X509 } from "../util/x509.js";

/** How many parsed certificates are kept (oldest dropped first). */
const KEPT = 256;
const parsed = new Map<string, X509.X509Certificate>();

/** The certificate `der` parsed (once while it stays among the last {@link KEPT}); throws on bad DER. */
export async function certificate(der: Uint8Array): Promise<X509.X509Certificate> {
  const id = toHex(der);
  const known = parsed.get(id);
  if (known) return known;
  const X = await x509();
  const cert = new X.X509Certificate(toArrayBuffer(der));
  if (parsed.size >= KEPT) parsed.delete(parsed.keys().next().value!);
  parsed.set(id, cert);
  return cert;
}

/** Verified "`child` is signed by `issuer`" pairs, by the two certificates' DER. */
const signedBy = new Map<string, boolean>();

/** Whether `child`'s signature verifies with `issuer`'s key (kept: certificates do not change). */
export async function isSignedBy(child: X509.X509Certificate, issuer: X509.X509Certificate): Promise<boolean> {
  const id = `${toHex(new Uint8Array(child.rawData))}/${toHex(new Uint8Array(issuer.rawData))}`;
  const known = signedBy.get(id);
  if (known !== undefined) return known;
  const ok = child.issuer === issuer.subject && (await child.verify({ publicKey: issuer.publicKey, signatureOnly: true }));
  if (signedBy.size >= KEPT) signedBy.delete(signedBy.keys().next().value!);
  signedBy.set(id, ok);
  return ok;
}
