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
import { nodeBuiltin } from "../runtime/node-builtin.js";
import type { JwsAlgorithm } from "./algorithms.js";
import { keyMaterial } from "./key-material.js";

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

/** The KeyObject behind each CryptoKey (null: Node cannot use it), converted once. */
const keyObjects = new WeakMap<CryptoKey, NodeKeyObject | null>();

function keyObjectOf(native: NodeCrypto, key: CryptoKey): NodeKeyObject | null {
  let ko = keyObjects.get(key);
  if (ko === undefined) {
    try {
      ko = convert(native, key);
    } catch {
      ko = null;
    }
    keyObjects.set(key, ko);
  }
  return ko;
}

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
  const native = loadNodeCrypto();
  if (!native) return undefined;
  const ko = keyObjectOf(native, key);
  if (!ko) return undefined;
  // A runtime whose node:crypto is partial (workerd's nodejs_compat refuses a KeyObject in
  // sign's options) gets WebCrypto from then on for this key, rather than a failed token.
  const decline = (): undefined => {
    keyObjects.set(key, null);
    return undefined;
  };
  try {
    const result = signWith(native, ko, alg, data);
    return result instanceof Promise ? result.catch(decline) : result;
  } catch {
    return decline();
  }
}

function signWith(native: NodeCrypto, ko: NodeKeyObject, alg: JwsAlgorithm, data: Uint8Array): Uint8Array | Promise<Uint8Array> | undefined {
  const hash = HASH[alg.slice(2)];
  switch (alg.slice(0, 2)) {
    case "RS":
      return ko.type === "private" ? signOffThread(native, hash!, data, ko) : undefined;
    case "PS":
      return ko.type === "private"
        ? signOffThread(native, hash!, data, { key: ko, padding: native.constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 })
        : undefined;
    case "ES":
      return ko.type === "private" ? native.sign(hash!, data, { key: ko, dsaEncoding: "ieee-p1363" }) : undefined;
    case "Ed":
      return ko.type === "private" ? native.sign(null, data, ko) : undefined;
    case "HS":
      return ko.type === "secret" ? native.createHmac(hash!, ko).update(data).digest() : undefined;
    default:
      return undefined;
  }
}
