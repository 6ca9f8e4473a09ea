/**
 * Verifying digests while bytes stream past: a TransformStream that passes
 * chunks through, counts and hashes them, and errors at the end when the
 * content does not match the expected digest or size. The consumer (a local
 * store) then keeps nothing.
 *
 * @module
 */
import { createHasher, digestBytes } from "../oci/hash.js";
import { RegistryClientError } from "./errors.js";

/** Hash a whole byte array to an OCI digest string (`sha256:<hex>`). */
export function digestOf(bytes: Uint8Array, algorithm: "sha256" | "sha512" = "sha256"): string {
  return digestBytes(algorithm, bytes);
}

/**
 * A pass-through stream that checks `expected` (and `size`, when given) and
 * reports progress after each chunk.
 */
export function verifying(expected: string, size?: number, onBytes?: (done: number) => void): TransformStream<Uint8Array, Uint8Array> {
  const algorithm = expected.slice(0, expected.indexOf(":"));
  if (algorithm !== "sha256" && algorithm !== "sha512") {
    throw new RegistryClientError("DIGEST_INVALID", `unsupported digest algorithm in ${expected}`, 0);
  }
  const hash = createHasher(algorithm);
  let done = 0;
  return new TransformStream({
    transform(chunk, controller) {
      done += chunk.byteLength;
      if (size !== undefined && done > size) {
        controller.error(new RegistryClientError("SIZE_INVALID", `blob ${expected} is larger than ${size} bytes`, 0));
        return;
      }
      hash.update(chunk);
      controller.enqueue(chunk);
      onBytes?.(done);
    },
    flush(controller) {
      const actual = hash.digest();
      if (actual !== expected) controller.error(new RegistryClientError("DIGEST_INVALID", `content of ${expected} hashes to ${actual}`, 0));
      else if (size !== undefined && done !== size) controller.error(new RegistryClientError("SIZE_INVALID", `blob ${expected} has ${done} bytes, expected ${size}`, 0));
    },
  });
}

/** At most `length` bytes of a stream; the rest is cancelled. */
export function limitStream(stream: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  let left = length;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (left <= 0) {
        controller.close();
        await reader.cancel().catch(() => {});
        return;
      }
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const part = value.byteLength > left ? value.subarray(0, left) : value;
      left -= part.byteLength;
      controller.enqueue(part);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
