/**
 * A streamed body whose length is known, sent so that every runtime keeps
 * its `Content-Length`. Node, Bun and Deno send the handler's header as is;
 * workerd drops it for a plain `ReadableStream` and sends the body chunked,
 * ending the chunked body cleanly even when the stream errors, so a client
 * could not tell a cut body from a whole one. Through the Workers
 * `FixedLengthStream` it keeps the length, and a body that errors short of it
 * is a cut transfer there too.
 *
 * @module
 */

type FixedLengthStreamConstructor = new (length: number) => TransformStream<Uint8Array, Uint8Array>;

/** `body` as a stream of exactly `size` bytes where the runtime has `FixedLengthStream` (Workers); else `body` itself. */
export function knownLength(body: ReadableStream<Uint8Array>, size: number): ReadableStream<Uint8Array> {
  const Fixed = (globalThis as { FixedLengthStream?: FixedLengthStreamConstructor }).FixedLengthStream;
  if (typeof Fixed !== "function") return body;
  const fixed = new Fixed(size);
  // A source error aborts the fixed stream (the client sees fewer bytes than announced); its failure is the response's.
  body.pipeTo(fixed.writable).catch(() => {});
  return fixed.readable;
}
