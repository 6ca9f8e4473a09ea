/**
 * Compact JWS (JWT) encoding, signing and signature verification with
 * WebCrypto (signing through `node:crypto` where the runtime has it, see `node-sign.ts`). Claim checks (iss, aud, exp, access) live in `verifier.ts`.
 *
 * @module
 */
import { AuthError, JwtError } from "../errors.js";
import type { Access } from "../access.js";
import { algorithmSpec, type JwsAlgorithm } from "./algorithms.js";
import { asciiBytes, b64url, b64urlText, fromB64url, fromUtf8, scratchAsciiBytes, toArrayBuffer, utf8 } from "../../util/bytes.js";
import { nodeSign } from "./node-sign.js";

/** A JOSE header. */
export interface JwtHeader {
  /** The signature algorithm, e.g. `RS256`. */
  alg: string;
  /** Always `JWT` in tokens registry-kit signs; not required when verifying. */
  typ?: string;
  /** The key id: a libtrust key id or an RFC 7638 thumbprint. */
  kid?: string;
  /** Certificate chain, leaf first, each standard-base64 DER. */
  x5c?: string[];
  [name: string]: unknown;
}

/** The claims of a registry token (and of refresh tokens). */
export interface TokenClaims {
  /** Issuer; must equal the verifier's `issuer`. */
  iss?: string;
  /** The user name; `""` for an anonymous caller. */
  sub?: string;
  /** Audience: the service the token is for. */
  aud?: string | string[];
  /** Expiry, seconds since the epoch. A token without it is refused. */
  exp?: number;
  /** Not before, seconds since the epoch. */
  nbf?: number;
  /** Issued at, seconds since the epoch. */
  iat?: number;
  /** A random token id. */
  jti?: string;
  /** The granted access (`[]` grants nothing). */
  access?: Access[];
  [name: string]: unknown;
}

/** A parsed, not yet verified, compact JWS. */
export interface DecodedJwt {
  /** The decoded JOSE header. */
  header: JwtHeader;
  /** The decoded claims. */
  payload: TokenClaims;
  /** `base64url(header) + "." + base64url(payload)`, the bytes that were signed. */
  signingInput: string;
  /** The raw signature bytes. */
  signature: Uint8Array;
}

// JwtError moved to errors.ts; re-exported so existing imports keep working.
export { JwtError };

/** Largest token accepted for parsing (bytes of the compact form). */
export const MAX_TOKEN_LENGTH = 64 * 1024;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Split and decode a compact JWS without verifying it. Throws {@link JwtError}
 * ("malformed token") for anything that is not three base64url parts holding
 * a JSON-object header with a string `alg` and a JSON-object payload.
 */
export function decodeJwt(token: string): DecodedJwt {
  if (token.length > MAX_TOKEN_LENGTH) throw new JwtError("malformed_token", "malformed token: too long");
  const parts = token.split(".");
  if (parts.length !== 3) throw new JwtError("malformed_token", "malformed token");
  const [h, p, s] = parts as [string, string, string];
  let header: unknown;
  let payload: unknown;
  let signature: Uint8Array;
  try {
    header = JSON.parse(fromUtf8(fromB64url(h)));
    payload = JSON.parse(fromUtf8(fromB64url(p)));
    signature = fromB64url(s);
  } catch {
    throw new JwtError("malformed_token", "malformed token");
  }
  if (!isObject(header) || typeof header.alg !== "string" || !isObject(payload)) throw new JwtError("malformed_token", "malformed token");
  return { header: header as JwtHeader, payload: payload as TokenClaims, signingInput: `${h}.${p}`, signature };
}

/** What {@link signJwt} signs with. Key providers produce these. */
export interface SigningKey {
  /** The algorithm `key` signs with. */
  alg: JwsAlgorithm;
  /** A private key (or, for HS256, a secret key) imported for `alg`. */
  key: CryptoKey;
  /** The key id put in the header (the libtrust id for asymmetric keys). */
  kid?: string;
  /** The certificate chain of the key, leaf first, standard-base64 DER; put in `x5c` when present. */
  x5c?: string[];
}

/** Options of {@link signJwt}. */
export interface SignOptions {
  /** Emit `x5c` when the key has a certificate chain. Default true. */
  x5c?: boolean;
  /** Emit `kid`. Default true. */
  kid?: boolean;
  /** Extra header members (cannot override `alg`). */
  header?: Record<string, unknown>;
}

/**
 * The encoded header of each key, with and without `x5c` / `kid`: a token
 * service signs every token with the same few (an `x5c` chain is kilobytes).
 */
const encodedHeaders = new WeakMap<SigningKey, Array<string | undefined>>();

function encodedHeader(key: SigningKey, options: SignOptions): string {
  const build = (): string => {
    const header: Record<string, unknown> = { typ: "JWT", ...options.header, alg: key.alg };
    if (key.kid && options.kid !== false) header.kid = key.kid;
    if (key.x5c && key.x5c.length > 0 && options.x5c !== false) header.x5c = key.x5c;
    return b64urlText(JSON.stringify(header));
  };
  if (options.header) return build();
  let byFlags = encodedHeaders.get(key);
  if (!byFlags) encodedHeaders.set(key, (byFlags = []));
  const flags = (options.kid !== false ? 1 : 0) | (options.x5c !== false ? 2 : 0);
  return (byFlags[flags] ??= build());
}

/**
 * Sign `payload` as a compact JWS with header `{typ:"JWT", alg, kid, x5c}`.
 *
 * Not an `async` function on purpose: where `node:crypto` signs in the
 * caller's thread (EC, EdDSA, HMAC) the token is made synchronously and
 * handed over settled, without the suspension and extra microtask an `await`
 * costs (a tenth of an ES256 token's CPU). Errors still arrive as a rejection.
 */
export function signJwt(payload: object, key: SigningKey, options: SignOptions = {}): Promise<string> {
  try {
    const spec = algorithmSpec(key.alg);
    if (!spec) throw new AuthError("invalid_key", `unsupported algorithm ${String(key.alg)}`);
    const signingInput = `${encodedHeader(key, options)}.${b64urlText(JSON.stringify(payload))}`;
    // The signing input is base64url and dots: ASCII, so its bytes need no UTF-8 encoder. They are reused
    // by the next call: node:crypto reads them before it returns (its callback form, RSA's, copies them).
    const sig = nodeSign(key.alg, key.key, scratchAsciiBytes(signingInput));
    if (sig instanceof Uint8Array) return Promise.resolve(`${signingInput}.${b64url(sig)}`);
    return finishSign(signingInput, spec.signParams, key.key, sig);
  } catch (e) {
    return Promise.reject(e);
  }
}

async function finishSign(signingInput: string, params: AlgorithmIdentifier, key: CryptoKey, pending: Promise<Uint8Array | undefined> | undefined): Promise<string> {
  const sig = (await pending) ?? new Uint8Array(await crypto.subtle.sign(params, key, toArrayBuffer(asciiBytes(signingInput))));
  return `${signingInput}.${b64url(sig)}`;
}

/** Check the signature of a decoded token with `key`, imported for `alg`. Never throws for a bad signature. */
export async function verifySignature(decoded: DecodedJwt, alg: JwsAlgorithm, key: CryptoKey): Promise<boolean> {
  const spec = algorithmSpec(alg);
  if (!spec || decoded.signature.length === 0) return false;
  try {
    return await crypto.subtle.verify(spec.signParams, key, toArrayBuffer(decoded.signature), toArrayBuffer(utf8(decoded.signingInput)));
  } catch {
    return false;
  }
}
