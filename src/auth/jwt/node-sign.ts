/**
 * A `node:crypto` signer for JWS, used by {@link signJwt} when the runtime
 * has it (Node, and runtimes exposing `process.getBuiltinModule`), on the
 * same key, so the signatures are the same. The KeyObject is built from the
 * bytes the key was imported from (`key-material.ts`); `KeyObject.from()` is
 * used only on extractable keys, because on a non-extractable one it is
 * deprecated (DEP0204, Node 24). A non-extractable key this library did not
 * import goes to WebCrypto.
 *
 * - EC, EdDSA and HMAC sign in the caller's thread: a signature costs tens
 *   of microseconds, less than WebCrypto's hop to a worker thread and back.
 * - RSA (RS*, PS*) signs on libuv's thread pool (`sign(…, callback)`): an
 *   RSA-2048 signature takes ~0.7 ms, which in the caller's thread would
 *   stall every other request of the server for as long, and leave the
 *   machine's other cores idle while tokens queue. Off the event loop, a
 *   server's requests run beside the signatures, and concurrent token
 *   requests are signed on every core (the pool's threads also keep
 *   OpenSSL's tables in their own caches).
 *
 * Like `hash.ts`, the
 * built-in is reached at run time, so the core compiles and bundles without
 * Node; anywhere else (or for a key Node cannot take) it returns `undefined`
 * and the caller uses WebCrypto.
 *
 * @module
 */
import { nodeBuiltin } from "../../runtime/node-builtin.js";
import type { JwsAlgorithm } from "./algorithms.js";
import { keyMaterial } from "../keys/key-material.js";

interface NodeKeyObject {
  readonly type: string;
}
type SignKey = NodeKeyObject | { key: NodeKeyObject; [option: string]: unknown };
interface NodeCrypto {
  KeyObject: { from(key: CryptoKey): NodeKeyObject };
  createPrivateKey(key: { key: Uint8Array; format: "der"; type: "pkcs8" }): NodeKeyObject;
  createSecretKey(key: Uint8Array): NodeKeyObject;
  sign(algorithm: string | null, data: Uint8Array, key: SignKey): Uint8Array;
  sign(algorithm: string | null, data: Uint8Array, key: SignKey, callback: (error: Error | null, signature: Uint8Array) => void): void;
  createHmac(algorithm: string, key: NodeKeyObject): { update(data: Uint8Array): { digest(): Uint8Array } };
  constants: { RSA_PKCS1_PSS_PADDING: number };
}

function loadNodeCrypto(): NodeCrypto | null {
  return nodeBuiltin<NodeCrypto>(
    "node:crypto",
    (m) =>
      typeof m.sign === "function" &&
      typeof m.KeyObject?.from === "function" &&
      typeof m.createHmac === "function" &&
      typeof m.createPrivateKey === "function" &&
      typeof m.createSecretKey === "function",
  );
}

/**
 * Signs data for one key and algorithm: the bytes, or a promise (RSA, on the
 * thread pool), or `undefined` when node:crypto cannot use this key here.
 */
type Signer = (data: Uint8Array) => Uint8Array | Promise<Uint8Array | undefined> | undefined;

/**
 * The signer of each CryptoKey and algorithm (null: Node cannot use the key),
 * made once: the KeyObject, the hash name and the options object are built on
 * the first token, not on every one.
 */
const signers = new WeakMap<CryptoKey, Map<JwsAlgorithm, Signer | null>>();

/** The node:crypto built-in, looked up on the first signature (null: not available). */
let native: NodeCrypto | null | undefined;

function convert(native: NodeCrypto, key: CryptoKey): NodeKeyObject | null {
  const material = keyMaterial(key);
  if (material?.format === "pkcs8") return native.createPrivateKey({ key: material.der, format: "der", type: "pkcs8" });
  if (material?.format === "secret") return native.createSecretKey(material.bytes);
  return key.extractable ? native.KeyObject.from(key) : null;
}

const HASH: Record<string, string> = { "256": "sha256", "384": "sha384", "512": "sha512" };

/** RSA signing on the thread pool (see the module comment). */
function signOffThread(native: NodeCrypto, hash: string, data: Uint8Array, key: SignKey): Promise<Uint8Array> {
  return new Promise((resolve, reject) => native.sign(hash, data, key, (error, signature) => (error ? reject(error) : resolve(signature))));
}

/**
 * Sign `data` with `key` for `alg` through `node:crypto` (RSA on the thread
 * pool, so a promise), or `undefined` when that is not available here (the
 * caller then uses WebCrypto).
 */
export function nodeSign(alg: JwsAlgorithm, key: CryptoKey, data: Uint8Array): Uint8Array | Promise<Uint8Array | undefined> | undefined {
  // A token service signs with one key: its signer is kept beside the two lookups that find it.
  if (last !== undefined && key === last.key && alg === last.alg) return sign(last.byAlg, alg, last.signer, data);
  if (native === undefined) native = loadNodeCrypto();
  if (native === null) return undefined;
  let byAlg = signers.get(key);
  if (!byAlg) signers.set(key, (byAlg = new Map()));
  let signer = byAlg.get(alg);
  if (signer === undefined) {
    try {
      const ko = convert(native, key);
      signer = ko ? (signerFor(native, ko, alg) ?? null) : null;
    } catch {
      signer = null;
    }
    byAlg.set(alg, signer);
  }
  if (signer === null) return undefined;
  last = { key, alg, byAlg, signer };
  return sign(byAlg, alg, signer, data);
}

/** The key, algorithm and signer {@link nodeSign} used last (holding that one key until another is used). */
let last: { key: CryptoKey; alg: JwsAlgorithm; byAlg: Map<JwsAlgorithm, Signer | null>; signer: Signer } | undefined;

function sign(byAlg: Map<JwsAlgorithm, Signer | null>, alg: JwsAlgorithm, signer: Signer, data: Uint8Array): Uint8Array | Promise<Uint8Array | undefined> | undefined {
  // A runtime whose node:crypto is partial (workerd's nodejs_compat refuses a KeyObject in
  // sign's options) gets WebCrypto from then on for this key, rather than a failed token.
  try {
    const result = signer(data);
    return result instanceof Promise ? result.catch(() => declined(byAlg, alg)) : result;
  } catch {
    return declined(byAlg, alg);
  }
}

function declined(byAlg: Map<JwsAlgorithm, Signer | null>, alg: JwsAlgorithm): undefined {
  byAlg.set(alg, null);
  if (last?.byAlg === byAlg && last.alg === alg) last = undefined;
  return undefined;
}

/** The signer of `ko` for `alg`, or `undefined` when the key's type does not fit the algorithm. */
function signerFor(native: NodeCrypto, ko: NodeKeyObject, alg: JwsAlgorithm): Signer | undefined {
  const hash = HASH[alg.slice(2)];
  switch (alg.slice(0, 2)) {
    case "RS":
      return ko.type === "private" ? (data) => signOffThread(native, hash!, data, ko) : undefined;
    case "PS": {
      if (ko.type !== "private") return undefined;
      const options = { key: ko, padding: native.constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 };
      return (data) => signOffThread(native, hash!, data, options);
    }
    case "ES": {
      if (ko.type !== "private") return undefined;
      const options = { key: ko, dsaEncoding: "ieee-p1363" };
      return (data) => native.sign(hash!, data, options);
    }
    case "Ed":
      return ko.type === "private" ? (data) => native.sign(null, data, ko) : undefined;
    case "HS":
      return ko.type === "secret" ? (data) => native.createHmac(hash!, ko).update(data).digest() : undefined;
    default:
      return undefined;
  }
}
