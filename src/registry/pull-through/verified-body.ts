/**
 * The client's copy of a blob fetched from an upstream, passed through while
 * hashed. The last chunk is held back until the digest (and the announced
 * size) is checked: a client never receives a complete body that does not
 * match, since its final bytes go out only after the check passed. When it
 * fails, the stream errors with that chunk still held, and the adapter cuts
 * the transfer (Node destroys the socket; Bun, Deno and Workers abort the
 * response), so the client sees fewer bytes than announced or a chunked body
 * without its end. A body that ends within its first two chunks is judged
 * before any header goes out: it is answered whole or refused with a 502.
 *
 * @module
 */
import type { Digest } from "../../oci/digest.js";
import { createHasher } from "../../oci/hash.js";
import { streamOf } from "../../util/streams.js";

/** The bytes of the upstream's body did not hash to the digest asked for, or their count is not the announced size. */
export class BlobMismatch extends Error {
  override readonly name = "BlobMismatch";
}

/**
 * Read `source` ahead by up to two chunks, then answer the client's stream,
 * or `undefined` when the whole body was already read and does not match.
 * A failure of `source` before the answer rejects (nothing was sent yet).
 */
export async function verifiedBody(source: ReadableStream<Uint8Array>, digest: Digest, size: number | undefined): Promise<ReadableStream<Uint8Array> | undefined> {
  const reader = source.getReader();
  const hasher = createHasher(digest.algorithm);
  let seen = 0;
  const next = async (): Promise<Uint8Array | undefined> => {
    const { done, value } = await reader.read();
    if (done) return undefined;
    hasher.update(value);
    seen += value.byteLength;
    if (size !== undefined && seen > size) {
      await reader.cancel().catch(() => {});
      throw new BlobMismatch(`upstream sent more than the ${size} bytes it announced for ${digest.value}`);
    }
    return value;
  };
  const matches = () => (size === undefined || seen === size) && hasher.digest() === digest.value;

  let held = await next();
  if (held === undefined) return matches() ? streamOf(new Uint8Array(0)) : undefined;
  let ahead = await next();
  if (ahead === undefined) return matches() ? streamOf(held) : undefined;

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const value = ahead ?? (await next());
        ahead = undefined;
        if (value !== undefined) {
          // Out goes the chunk before: the newest one waits until the next read tells whether it is the last.
          controller.enqueue(held!);
          held = value;
          return;
        }
        if (matches()) {
          controller.enqueue(held!);
          controller.close();
        } else {
          // The last chunk is never sent: the client cannot mistake what it got for the blob.
          controller.error(new BlobMismatch(`upstream bytes do not match ${digest.value}`));
        }
        held = undefined;
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
