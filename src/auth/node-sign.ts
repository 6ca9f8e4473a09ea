/**
 * A synchronous `node:crypto` signer for JWS, used by {@link signJwt} when
 * the runtime has it (Node, and runtimes exposing `process.getBuiltinModule`).
 * WebCrypto's `sign` hops to a worker thread and back through promises, which
 * for ES256 costs more than the signature itself and for RS256 adds about a
 * tenth; `node:crypto.sign` on the same key (`KeyObject.from(cryptoKey)`)
 * produces the same signatures in the caller's thread. Like `hash.ts`, the
 * built-in is reached at run time, so the core compiles and bundles without
 * Node; anywhere else (or for a key Node cannot take) it returns `undefined`
 * and the caller uses WebCrypto.
 *
 * @module
 */
import { nodeBuiltin } from "../runtime/node-builtin.js";
import type { JwsAlgorithm } from "./algorithms.js";

interface NodeKeyObject {
  readonly type: string;
}
interface NodeCrypto {
  KeyObject: { from(key: CryptoKey): NodeKeyObject };
  sign(algorithm: string | null, data: Uint8Array, key: NodeKeyObject | { key: NodeKeyObject; [option: string]: unknown }): Uint8Array;
  createHmac(algorithm: string, key: NodeKeyObject): { update(data: Uint8Array): { digest(): Uint8Array } };
  constants: { RSA_PKCS1_PSS_PADDING: number };
}

function loadNodeCrypto(): NodeCrypto | null {
  return nodeBuiltin<NodeCrypto>(
    "node:crypto",
    (m) => typeof m.sign === "function" && typeof m.KeyObject?.from === "function" && typeof m.createHmac === "function",
  );
}

/** The KeyObject behind each CryptoKey (null: Node cannot use it), converted once. */
const keyObjects = new WeakMap<CryptoKey, NodeKeyObject | null>();

function keyObjectOf(native: NodeCrypto, key: CryptoKey): NodeKeyObject | null {
  let ko = keyObjects.get(key);
  if (ko === undefined) {
    try {
      ko = native.KeyObject.from(key);
    } catch {
      ko = null;
    }
    keyObjects.set(key, ko);
  }
  return ko;
}

const HASH: Record<string, string> = { "256": "sha256", "384": "sha384", "512": "sha512" };

/**
 * Sign `data` with `key` for `alg` through `node:crypto`, or `undefined` when
 * that is not available here (the caller then uses WebCrypto).
 */
export function nodeSign(alg: JwsAlgorithm, key: CryptoKey, data: Uint8Array): Uint8Array | undefined {
  const native = loadNodeCrypto();
  if (!native) return undefined;
  const ko = keyObjectOf(native, key);
  if (!ko) return undefined;
  const hash = HASH[alg.slice(2)];
  switch (alg.slice(0, 2)) {
    case "RS":
      return ko.type === "private" ? native.sign(hash!, data, ko) : undefined;
    case "PS":
      return ko.type === "private"
        ? native.sign(hash!, data, { key: ko, padding: native.constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 })
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
