/**
 * The speed paths between an adapter and registry-kit's core, as one typed
 * capability (docs/performance.md, "Node-only speed paths"). The Node adapter
 * (src/node) is today's only provider; the core only checks, so it runs
 * unchanged on Bun, Deno and Workers, where nothing is offered and every
 * check answers "no". Three sides, each declared here and nowhere else:
 *
 * - a request offers {@link AdapterCapabilities} under
 *   {@link ADAPTER_CAPABILITIES} (its header lines as received, responses
 *   whose bytes the adapter writes directly); {@link capabilitiesOf} reads them;
 * - a handler declares with {@link readsRequestBasics} that it reads only a
 *   request's basics, which lets the adapter hand it a lighter request;
 * - a body stream declares with {@link markOwnedChunks} that its chunks are its
 *   reader's to free ({@link hasOwnedChunks}; the freeing itself is
 *   `releaseChunks` in src/util/owned-chunks.ts).
 *
 * @module
 */

/** Header lines as name/value pairs, in the order received. */
export type HeaderPairs = readonly (readonly [string, string])[];

/** The key under which a request offers its adapter's capabilities (see {@link capabilitiesOf}). */
export const ADAPTER_CAPABILITIES = Symbol.for("registry-kit.adapterCapabilities");

/** What the adapter that made a request does beyond the Fetch API. */
export interface AdapterCapabilities {
  /**
   * A response whose body bytes are in memory, for the adapter to write in one
   * call instead of reading them back through a stream (about 25 µs on Node
   * 20, a sixth of a manifest GET). It behaves as a `Response` with that body
   * to anything else that reads it.
   */
  respondInMemory(body: Uint8Array, init: ResponseInit): Response;
  /**
   * The request's header lines as the client sent them, for a reader on a hot
   * path that needs a few values without building a `Headers` (about 2 µs, and
   * 0.3 µs a `get`, on Node 20); `undefined` when not offered, or no longer
   * (once `headers` was made, since a caller may have changed it).
   */
  readonly headerPairs?: HeaderPairs | undefined;
}

/** A request that offers its adapter's capabilities. */
export interface CapableRequest {
  readonly [ADAPTER_CAPABILITIES]?: AdapterCapabilities;
}

/** The capabilities the adapter of `request` offers, or `undefined` for a plain `Request` (or none). */
export function capabilitiesOf(request: Request | undefined): AdapterCapabilities | undefined {
  return request === undefined ? undefined : (request as CapableRequest)[ADAPTER_CAPABILITIES];
}

/**
 * A response with `body` for `request`: through its adapter's
 * {@link AdapterCapabilities.respondInMemory} when it offers one, else a
 * plain `Response`.
 */
export function inMemoryResponse(request: Request | undefined, body: Uint8Array, init: ResponseInit): Response {
  const capabilities = capabilitiesOf(request);
  return capabilities ? capabilities.respondInMemory(body, init) : new Response(body as Uint8Array<ArrayBuffer>, init);
}

const BASICS = Symbol.for("registry-kit.readsRequestBasics");

/**
 * Mark `fn` as reading only its requests' `method`, `url`, `headers`,
 * `signal` and `body`, and never passing a request itself to
 * `new Request(request)` or `fetch(request)`. An adapter may then hand it a
 * lighter request object for requests without a body (src/node/light-request.ts);
 * registry-kit's own handlers carry the mark.
 */
export function readsRequestBasics<T extends object>(fn: T): T {
  Object.defineProperty(fn, BASICS, { value: true });
  return fn;
}

/** Whether `fn` carries the mark of {@link readsRequestBasics}. */
export function onlyReadsRequestBasics(fn: unknown): boolean {
  return typeof fn === "function" && (fn as { [BASICS]?: boolean })[BASICS] === true;
}

/** Streams whose chunks are their reader's to free. */
const owned = new WeakSet<object>();

/**
 * Mark `stream`: each chunk it yields is the only view of its own buffer, held
 * by nobody but the stream's reader, who may free it once consumed
 * (`releaseChunks`, src/util/owned-chunks.ts). The mark belongs to one stream
 * object: a stream made from a marked one (a tee, a transform) is not marked
 * unless its maker marks it, which only a maker that keeps no chunk may do
 * (the registry's hashing pass-through).
 */
export function markOwnedChunks<T extends ReadableStream<Uint8Array>>(stream: T): T {
  owned.add(stream);
  return stream;
}

/** Whether `body` is a stream marked with {@link markOwnedChunks}. */
export function hasOwnedChunks(body: unknown): boolean {
  return typeof body === "object" && body !== null && owned.has(body);
}
