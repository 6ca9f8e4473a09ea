/**
 * JWS algorithms: which exist, which are accepted by default, and how each
 * maps onto WebCrypto and onto a key type.
 *
 * @module
 */
import { AuthError } from "../errors.js";

/** Signature algorithms registry-kit can sign and verify. `none` is never one of them. */
export type JwsAlgorithm =
  | "RS256"
  | "RS384"
  | "RS512"
  | "PS256"
  | "PS384"
  | "PS512"
  | "ES256"
  | "ES384"
  | "ES512"
  | "EdDSA"
  | "HS256";

/**
 * What CNCF Distribution 2.8 accepts, and so the default allow-list of every
 * verifier here: RSA PKCS#1 v1.5 and ECDSA. PS*, EdDSA and HS256 must be
 * configured explicitly (HS256 only together with a shared secret).
 */
export const DEFAULT_ALGORITHMS: readonly JwsAlgorithm[] = Object.freeze(["RS256", "RS384", "RS512", "ES256", "ES384", "ES512"]);

/** The key family an algorithm needs. */
export type KeyFamily = "RSA" | "EC" | "OKP" | "oct";

/** How one algorithm is carried out with WebCrypto. */
export interface AlgorithmSpec {
  /** The JWS `alg` name. */
  alg: JwsAlgorithm;
  /** The key type (`kty`) the algorithm needs. */
  family: KeyFamily;
  /** Required curve for EC / OKP keys. */
  crv?: "P-256" | "P-384" | "P-521" | "Ed25519";
  /** Parameters for `importKey`. */
  importParams: RsaHashedImportParams | EcKeyImportParams | HmacImportParams | Algorithm;
  /** Parameters for `sign` / `verify`. */
  signParams: RsaPssParams | EcdsaParams | Algorithm;
}

const rsa = (alg: JwsAlgorithm, hash: string): AlgorithmSpec => ({
  alg,
  family: "RSA",
  importParams: { name: "RSASSA-PKCS1-v1_5", hash },
  signParams: { name: "RSASSA-PKCS1-v1_5" },
});
const pss = (alg: JwsAlgorithm, hash: string, saltLength: number): AlgorithmSpec => ({
  alg,
  family: "RSA",
  importParams: { name: "RSA-PSS", hash },
  signParams: { name: "RSA-PSS", saltLength } as RsaPssParams,
});
const ec = (alg: JwsAlgorithm, crv: "P-256" | "P-384" | "P-521", hash: string): AlgorithmSpec => ({
  alg,
  family: "EC",
  crv,
  importParams: { name: "ECDSA", namedCurve: crv } as EcKeyImportParams,
  signParams: { name: "ECDSA", hash } as EcdsaParams,
});

const SPECS: Record<JwsAlgorithm, AlgorithmSpec> = {
  RS256: rsa("RS256", "SHA-256"),
  RS384: rsa("RS384", "SHA-384"),
  RS512: rsa("RS512", "SHA-512"),
  PS256: pss("PS256", "SHA-256", 32),
  PS384: pss("PS384", "SHA-384", 48),
  PS512: pss("PS512", "SHA-512", 64),
  ES256: ec("ES256", "P-256", "SHA-256"),
  ES384: ec("ES384", "P-384", "SHA-384"),
  ES512: ec("ES512", "P-521", "SHA-512"),
  EdDSA: { alg: "EdDSA", family: "OKP", crv: "Ed25519", importParams: { name: "Ed25519" }, signParams: { name: "Ed25519" } },
  HS256: {
    alg: "HS256",
    family: "oct",
    importParams: { name: "HMAC", hash: "SHA-256" } as HmacImportParams,
    signParams: { name: "HMAC" },
  },
};

/** The spec of a known algorithm, or `undefined` (for `none` and anything unknown). */
export function algorithmSpec(alg: unknown): AlgorithmSpec | undefined {
  return typeof alg === "string" && Object.hasOwn(SPECS, alg) ? SPECS[alg as JwsAlgorithm] : undefined;
}

/** Whether `alg` names an algorithm registry-kit implements. */
export function isJwsAlgorithm(alg: unknown): alg is JwsAlgorithm {
  return algorithmSpec(alg) !== undefined;
}

/** Minimum RSA modulus size accepted for signing or verifying. */
export const MIN_RSA_BITS = 2048;

/**
 * Normalise a configured allow-list: unknown names and `none` are refused
 * with an error, duplicates are removed.
 */
export function allowList(algorithms: readonly string[] | undefined): ReadonlySet<JwsAlgorithm> {
  const list = algorithms ?? DEFAULT_ALGORITHMS;
  const out = new Set<JwsAlgorithm>();
  for (const a of list) {
    if (!isJwsAlgorithm(a)) throw new AuthError("config", `unsupported JWS algorithm in allow-list: ${JSON.stringify(a)}`);
    out.add(a);
  }
  return out;
}
