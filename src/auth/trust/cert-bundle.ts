/**
 * The root certificate bundle (`rootcertbundle`) and the trust decisions made
 * with it: which public key verifies a token, found by `x5c` chain, libtrust
 * `kid`, or RFC 7638 thumbprint `kid`, in that order.
 *
 * @module
 */
import { AuthError, JwtError } from "../errors.js";
import { equalBytes, fromB64, toArrayBuffer } from "../../util/bytes.js";
import type { JwtHeader } from "../jwt/jwt.js";
import { verificationKeysFromPem } from "../keys/keys.js";
import type { JwksKey } from "./jwks.js";
import { VerificationKey } from "./public-key.js";
import { x509, type X509 } from "./x509.js";

type X509Certificate = X509.X509Certificate;

/** The keys and anchors a verifier trusts. Build with {@link parseCertBundle} or {@link trustStoreFromKeys}. */
export interface TrustStore {
  /**
   * Trust anchors for `x5c` chains, DER. Parsed (with `@peculiar/x509`) the
   * first time a chain is verified, so a server that never meets an `x5c`
   * header never loads the X.509 library.
   */
  readonly certificatesDer: readonly Uint8Array[];
  /** Every trusted key (from the certificates and any bare public keys). */
  readonly keys: readonly VerificationKey[];
  /** Trusted keys by libtrust key id (case-sensitive). */
  readonly byKid: ReadonlyMap<string, VerificationKey>;
  /** Trusted keys by RFC 7638 thumbprint (case-sensitive). */
  readonly byThumbprint: ReadonlyMap<string, VerificationKey>;
  /**
   * Keys of a JWKS by their own `kid` (case-sensitive), with the one
   * algorithm each may verify when its JWK names one. Only found by that
   * `kid`, as in Distribution 3, never by libtrust id or thumbprint.
   */
  readonly byJwksKid?: ReadonlyMap<string, JwksKey>;
}

/**
 * Build a trust store from verification keys (their certificates become
 * `x5c` anchors) and the keys of a JWKS (found by their `kid` only).
 */
export function trustStoreFromKeys(keys: readonly VerificationKey[], jwks: readonly JwksKey[] = []): TrustStore {
  const byKid = new Map<string, VerificationKey>();
  const byThumbprint = new Map<string, VerificationKey>();
  const certificatesDer: Uint8Array[] = [];
  for (const k of keys) {
    if (!byKid.has(k.kid)) byKid.set(k.kid, k);
    if (!byThumbprint.has(k.thumbprint)) byThumbprint.set(k.thumbprint, k);
    if (k.certificateDer) certificatesDer.push(k.certificateDer);
  }
  const byJwksKid = new Map<string, JwksKey>();
  for (const j of jwks) if (!byJwksKid.has(j.kid)) byJwksKid.set(j.kid, j);
  return { certificatesDer, keys: [...keys, ...jwks.map((j) => j.key)], byKid, byThumbprint, byJwksKid };
}

/**
 * Parse a root certificate bundle: PEM text with one or more `CERTIFICATE`
 * blocks (bare `PUBLIC KEY` blocks are also accepted; they can be matched by
 * `kid` but anchor no chain). Throws when nothing usable is found.
 */
export async function parseCertBundle(pem: string): Promise<TrustStore> {
  const keys = await verificationKeysFromPem(pem);
  if (keys.length === 0) throw new AuthError("invalid_key", "root certificate bundle holds no CERTIFICATE (or PUBLIC KEY) block");
  return trustStoreFromKeys(keys);
}

const MAX_CHAIN = 8;

function validAt(cert: X509Certificate, now: Date): boolean {
  return cert.notBefore.getTime() <= now.getTime() && now.getTime() <= cert.notAfter.getTime();
}

function isCa(lib: typeof X509, cert: X509Certificate): boolean {
  const bc = cert.getExtension(lib.BasicConstraintsExtension);
  return bc !== null && bc.ca;
}

function sameCert(a: X509Certificate, b: X509Certificate): boolean {
  return equalBytes(new Uint8Array(a.rawData), new Uint8Array(b.rawData));
}

async function signedBy(cert: X509Certificate, issuer: X509Certificate): Promise<boolean> {
  if (cert.issuer !== issuer.subject) return false;
  try {
    return await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

/**
 * Verify an `x5c` header (leaf first, standard-base64 DER) up to a trust
 * anchor: every link's signature and validity dates are checked, and every
 * issuing certificate must be a CA. A leaf that is itself an anchor is
 * trusted. Resolves to the leaf's public key; throws {@link JwtError} otherwise.
 */
export async function verifyX5c(store: TrustStore, x5c: unknown, now: Date): Promise<VerificationKey> {
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_CHAIN || !x5c.every((c) => typeof c === "string")) {
    throw new JwtError("malformed_token", "malformed token: bad x5c");
  }
  const cacheKey = (x5c as string[]).join(",");
  let cache = chainCache.get(store);
  const hit = cache?.get(cacheKey);
  const t = now.getTime();
  if (hit && hit.from <= t && t <= hit.until) return hit.key;
  const verified = await verifyChain(store, x5c as string[], now);
  if (!cache) chainCache.set(store, (cache = new Map()));
  if (cache.size >= CHAIN_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(cacheKey, verified);
  return verified.key;
}

const CHAIN_CACHE_SIZE = 256;
const chainCache = new WeakMap<TrustStore, Map<string, VerifiedChain>>();

interface VerifiedChain {
  key: VerificationKey;
  /** The window in which every certificate used is valid (ms since epoch). */
  from: number;
  until: number;
}

/** Each store's anchors as parsed certificates, made on the first `x5c` chain. */
const parsedAnchors = new WeakMap<TrustStore, Promise<X509Certificate[]>>();

function anchorsOf(store: TrustStore): Promise<X509Certificate[]> {
  let anchors = parsedAnchors.get(store);
  if (!anchors) {
    anchors = x509().then(({ X509Certificate }) => store.certificatesDer.map((der) => new X509Certificate(toArrayBuffer(der))));
    parsedAnchors.set(store, anchors);
  }
  return anchors;
}

async function verifyChain(store: TrustStore, x5c: string[], now: Date): Promise<VerifiedChain> {
  const lib = await x509();
  const { X509Certificate } = lib;
  const anchors = await anchorsOf(store);
  let chain: X509Certificate[];
  try {
    chain = x5c.map((c) => new X509Certificate(toArrayBuffer(fromB64(c))));
  } catch {
    throw new JwtError("malformed_token", "malformed token: bad x5c certificate");
  }
  const leaf = chain[0]!;
  let current = leaf;
  let from = -Infinity;
  let until = Infinity;
  const use = (c: X509Certificate) => {
    from = Math.max(from, c.notBefore.getTime());
    until = Math.min(until, c.notAfter.getTime());
  };
  const done = async (): Promise<VerifiedChain> => {
    let key: VerificationKey;
    try {
      key = await VerificationKey.fromSpki(new Uint8Array(leaf.publicKey.rawData), new Uint8Array(leaf.rawData));
    } catch (e) {
      throw new JwtError("bad_certificate", `unable to use x5c leaf key: ${(e as Error).message}`);
    }
    return { key, from, until };
  };
  const intermediates = chain.slice(1);
  for (let depth = 0; depth <= MAX_CHAIN; depth++) {
    if (!validAt(current, now)) throw new JwtError("bad_certificate", "unable to verify certificate chain: certificate expired or not yet valid");
    use(current);
    if (anchors.some((a) => sameCert(a, current))) return done();
    for (const anchor of anchors) {
      if (isCa(lib, anchor) && validAt(anchor, now) && (await signedBy(current, anchor))) {
        use(anchor);
        return done();
      }
    }
    let next: X509Certificate | undefined;
    for (const cand of intermediates) {
      if (cand !== current && isCa(lib, cand) && (await signedBy(current, cand))) {
        next = cand;
        break;
      }
    }
    if (!next) throw new JwtError("unknown_key", "unable to verify certificate chain: certificate signed by unknown authority");
    current = next;
  }
  throw new JwtError("bad_certificate", "unable to verify certificate chain: too long");
}

/**
 * Find the key that should verify a token with this header: a `kid` of a
 * trusted JWKS key first (whose JWK `alg`, when set, must be the token's
 * `alg`), else an `x5c` chain to the bundle, else a `kid` equal to a trusted
 * key's libtrust id, else a `kid` equal to its thumbprint. Throws {@link JwtError}
 * with the reason.
 */
export async function resolveSigningKey(store: TrustStore, header: JwtHeader, now: Date): Promise<VerificationKey> {
  const kid = header.kid;
  if (kid !== undefined && typeof kid !== "string") throw new JwtError("malformed_token", "malformed token: kid is not a string");
  // A JWKS key named by kid wins over an x5c chain: the key is trusted as it
  // is, and the chain (made for a bundle) need not lead anywhere here.
  const fromJwks = kid === undefined ? undefined : store.byJwksKid?.get(kid);
  if (fromJwks) {
    if (fromJwks.alg !== undefined && fromJwks.alg !== header.alg) {
      throw new JwtError("algorithm_not_allowed", `unable to verify signature: key ${JSON.stringify(kid)} is for ${fromJwks.alg}, not ${JSON.stringify(header.alg)}`);
    }
    return fromJwks.key;
  }
  if (header.x5c !== undefined) return verifyX5c(store, header.x5c, now);
  if (kid === undefined) throw new JwtError("unknown_key", "unable to get token signing key");
  const key = store.byKid.get(kid) ?? store.byThumbprint.get(kid);
  if (!key) throw new JwtError("unknown_key", `token signed by untrusted key with ID: ${JSON.stringify(kid)}`);
  return key;
}
