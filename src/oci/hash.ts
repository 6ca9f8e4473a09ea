/**
 * Streaming SHA-256/512 for blob digests (docs/architecture.md rules 3 and 4).
 *
 * On Node (and runtimes exposing `process.getBuiltinModule`) this uses
 * `node:crypto`, about three times faster than JavaScript hashing, which
 * matters for multi-GiB layers. Elsewhere it falls back to `@noble/hashes`.
 * The built-in is reached at run time rather than imported, so the core
 * compiles and bundles without Node.
 *
 * @module
 */
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { nodeBuiltin } from "../runtime/node-builtin.js";
import { toHex } from "../util/bytes.js";
import type { DigestAlgorithm } from "./digest.js";

/** An incremental hash. `digest()` may be called once, after the last `update`. */
export interface StreamHasher {
  readonly algorithm: DigestAlgorithm;
  update(chunk: Uint8Array): void;
  /** The digest string, `algorithm:hex`. */
  digest(): string;
  /** An independent hasher in the same state (to take a digest so far and keep hashing). */
  clone(): StreamHasher;
}

interface NodeHash {
  update(data: Uint8Array): unknown;
  digest(encoding: "hex"): string;
  copy(): NodeHash;
}
interface NodeCrypto {
  createHash(algorithm: string): NodeHash;
}

function loadNodeCrypto(): NodeCrypto | null {
  return nodeBuiltin<NodeCrypto>("node:crypto", (m) => typeof m.createHash === "function");
}

/** Which implementation the registry's hasher uses in this runtime: `node:crypto` when available, else `@noble/hashes`. */
export function hashBackend(): "node:crypto" | "noble" {
  return loadNodeCrypto() ? "node:crypto" : "noble";
}

/** Start an incremental hash. `backend` forces an implementation (for tests and benchmarks). */
export function createHasher(algorithm: DigestAlgorithm, backend: "node:crypto" | "noble" = hashBackend()): StreamHasher {
  const native = backend === "node:crypto" ? loadNodeCrypto() : null;
  if (native) return nodeHasher(algorithm, native.createHash(algorithm));
  return nobleHasher(algorithm, (algorithm === "sha256" ? sha256 : sha512).create());
}

function nodeHasher(algorithm: DigestAlgorithm, hash: NodeHash): StreamHasher {
  return {
    algorithm,
    update: (chunk) => void hash.update(chunk),
    digest: () => `${algorithm}:${hash.digest("hex")}`,
    clone: () => nodeHasher(algorithm, hash.copy()),
  };
}

type NobleHash = ReturnType<typeof sha256.create> | ReturnType<typeof sha512.create>;
function nobleHasher(algorithm: DigestAlgorithm, hash: NobleHash): StreamHasher {
  return {
    algorithm,
    update: (chunk) => void hash.update(chunk),
    digest: () => `${algorithm}:${toHex(hash.digest())}`,
    clone: () => nobleHasher(algorithm, hash.clone() as NobleHash),
  };
}

/** Digest of bytes already in memory (manifests). */
export function digestBytes(algorithm: DigestAlgorithm, bytes: Uint8Array): string {
  const hasher = createHasher(algorithm);
  hasher.update(bytes);
  return hasher.digest();
}

/** Digest of a whole stream, consumed chunk by chunk. */
export async function digestStream(algorithm: DigestAlgorithm, stream: ReadableStream<Uint8Array>): Promise<string> {
  const hasher = createHasher(algorithm);
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      hasher.update(value);
    }
  } finally {
    reader.releaseLock();
  }
  return hasher.digest();
}
