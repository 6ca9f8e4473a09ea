/** Shared fixtures for the auth tests: keys, raw token builders, constants. */
import { expect } from "vitest";
import { b64url, toArrayBuffer, utf8 } from "../../src/util/bytes.js";
import { generatedKeys, VerificationKey, type GeneratedKeyProvider, type KeyPem } from "../../src/auth/index.js";

export const REALM = "http://127.0.0.1:5056/service/token";
export const SERVICE = "registry.test";
export const ISSUER = "registry-kit-test-issuer";

export interface Signer {
  keys: GeneratedKeyProvider;
  pem: KeyPem;
  /** The public key, with kid and thumbprint. */
  vk: VerificationKey;
  privateKey: CryptoKey;
}

// Keyed by test file too: with `isolate: false` this module is shared by the
// files of a worker, and two files' labels must still name two keys.
const cache = new Map<string, Promise<Signer>>();

/** A generated key with a self-signed certificate; memoised per test file and label so a test file makes few keys. */
export function signer(label: string, alg: "RS256" | "ES256" | "PS256" | "EdDSA" = "RS256"): Promise<Signer> {
  const id = `${expect.getState().testPath ?? ""}:${label}/${alg}`;
  let p = cache.get(id);
  if (!p) {
    p = (async () => {
      const keys = generatedKeys({ alg });
      const pem = await keys.exportPem();
      const [vk] = await keys.verificationKeys();
      const sk = await keys.signingKey();
      return { keys, pem, vk: vk!, privateKey: sk.key };
    })();
    cache.set(id, p);
  }
  return p;
}

/** Encode a token from parts; `signature` is raw bytes. */
export function encode(header: object, payload: object, signature: Uint8Array = new Uint8Array()): string {
  return `${b64url(utf8(JSON.stringify(header)))}.${b64url(utf8(JSON.stringify(payload)))}.${b64url(signature)}`;
}

/** Sign arbitrary header/payload with a WebCrypto key and sign params. */
export async function rawSign(
  header: object,
  payload: object,
  key: CryptoKey,
  params: AlgorithmIdentifier | RsaPssParams | EcdsaParams,
): Promise<string> {
  return rawSignText(JSON.stringify(header), JSON.stringify(payload), key, params);
}

/**
 * Sign header and payload given as JSON text, for payloads `JSON.stringify`
 * cannot produce (e.g. the number `1e400`, which parses to Infinity).
 */
export async function rawSignText(
  header: string,
  payload: string,
  key: CryptoKey,
  params: AlgorithmIdentifier | RsaPssParams | EcdsaParams,
): Promise<string> {
  const input = `${b64url(utf8(header))}.${b64url(utf8(payload))}`;
  const sig = new Uint8Array(await crypto.subtle.sign(params, key, toArrayBuffer(utf8(input))));
  return `${input}.${b64url(sig)}`;
}

/** A PKCS#8 private key PEM re-imported for another algorithm (e.g. RSA-PSS). */
export async function importPkcs8(pem: string, params: RsaHashedImportParams | EcKeyImportParams | HmacImportParams | Algorithm): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
  return crypto.subtle.importKey("pkcs8", der, params, false, ["sign"]);
}

export const nowSec = () => Math.floor(Date.now() / 1000);

/** Standard claims for a token valid now. */
export function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = nowSec();
  return {
    iss: ISSUER,
    sub: "alice",
    aud: SERVICE,
    exp: iat + 300,
    nbf: iat,
    iat,
    jti: "test",
    access: [{ type: "repository", name: "interop/hello", actions: ["pull"] }],
    ...overrides,
  };
}

export function pull(name: string) {
  return [{ type: "repository", name, actions: ["pull"] }];
}
export function push(name: string) {
  return [{ type: "repository", name, actions: ["pull", "push"] }];
}
export const CATALOG = [{ type: "registry", name: "catalog", actions: ["*"] }];
