/**
 * What an adapter offers the core beyond the Fetch API: the one typed
 * capability through which a runtime's speed paths reach registry-kit's
 * handlers (docs/performance.md, "Node-only speed paths").
 *
 * A request made by such an adapter answers {@link capabilitiesOf} with its
 * {@link AdapterCapabilities}; every other `Request` answers `undefined` and
 * gets the plain Fetch API path. The Node adapter (src/node) is today's only
 * provider; the core only checks, so it runs unchanged on Bun, Deno and
 * Workers.
 *
 * @module
 */

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
