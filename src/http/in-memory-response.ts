/**
 * A fast lane for responses whose body is already in memory (manifests, JSON
 * listings, error bodies), between registry-kit's handlers and its own Node
 * adapter.
 *
 * `new Response(bytes)` wraps the bytes in a web stream, and the adapter then
 * reads them back through that stream's promises: together about 25 µs, a
 * sixth of a whole manifest GET. An {@link InMemoryResponse} is a real
 * `Response` made without a body that holds the bytes itself; the adapter
 * takes them with {@link takeInMemoryBody} and writes them with the headers in
 * one call. To anything else in between (a wrapper that reads `body`,
 * `text()`, `clone()`s it, copies it into `new Response(r.body, r)`) it
 * behaves as a Response with that body.
 *
 * Other runtimes (Bun, Deno, workers) read a Response's internal body, not
 * its `body` getter, so handlers build one only for requests whose adapter
 * offers it (`respondInMemory` of src/runtime/adapter-capabilities.ts, which
 * {@link inMemoryResponse} checks); every other request gets a plain `Response`.
 *
 * @module
 */
import { ADAPTER_CAPABILITIES, type AdapterCapabilities } from "../runtime/adapter-capabilities.js";
import { initPairs } from "../oci/wire.js";

export { inMemoryResponse } from "../runtime/adapter-capabilities.js";

/** The capability of an adapter that writes {@link InMemoryResponse}s itself with {@link takeInMemoryBody}. */
export const IN_MEMORY_RESPONSES: AdapterCapabilities = {
  respondInMemory: (body, init) => new InMemoryResponse(body, init),
};

/**
 * Offer {@link IN_MEMORY_RESPONSES} on `request`, for an adapter (or a test)
 * whose requests are not of a class that offers it already.
 */
export function markInMemoryReader(request: Request): void {
  Object.defineProperty(request, ADAPTER_CAPABILITIES, { value: IN_MEMORY_RESPONSES, configurable: true });
}

const decoder = new TextDecoder(); // strips a UTF-8 BOM, as Response.text() does

/** What the adapter takes from an {@link InMemoryResponse}. */
export interface InMemoryBody {
  /** The body. */
  bytes: Uint8Array;
  /**
   * The headers as given to the constructor, when nobody has read
   * `response.headers` (which could have changed them); else `undefined` and
   * the adapter reads `response.headers`.
   */
  headers?: Iterable<readonly [string, string]>;
}

/** A `Response` whose body is a byte array held in memory (see the module comment). */
export class InMemoryResponse extends Response {
  #bytes: Uint8Array;
  #stream: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;
  #used = false;
  /** The headers given, until `headers` is first read (then they are in the real Headers). */
  #headerInit: Iterable<readonly [string, string]> | undefined;

  /**
   * `bytes` are never modified nor handed out: readers get copies. The
   * headers go into the Response's `Headers` only when someone reads
   * `headers`: the adapter writes them as given.
   */
  constructor(bytes: Uint8Array, init: ResponseInit) {
    super(null, { status: init.status, ...(init.statusText !== undefined ? { statusText: init.statusText } : {}) });
    this.#bytes = bytes;
    this.#headerInit = init.headers === undefined ? [] : initPairs(init.headers);
  }

  override get headers(): Headers {
    const headers = super.headers;
    if (this.#headerInit) {
      const given = this.#headerInit;
      this.#headerInit = undefined;
      for (const [name, value] of given) headers.append(name, value);
    }
    return headers;
  }

  /** The body's length in bytes, without reading `headers` (which would cost the adapter its fast path). */
  get byteLength(): number {
    return this.#bytes.byteLength;
  }

  /** The adapter's direct read; `undefined` once the body has been read or exposed as a stream. */
  take(): InMemoryBody | undefined {
    if (this.#used || this.#stream) return undefined;
    this.#used = true;
    return this.#headerInit ? { bytes: this.#bytes, headers: this.#headerInit } : { bytes: this.#bytes };
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    if (!this.#stream) {
      const bytes = this.#used ? new Uint8Array(0) : this.#bytes.slice();
      this.#stream = new ReadableStream({
        type: "bytes",
        start(controller) {
          if (bytes.byteLength > 0) controller.enqueue(bytes);
          controller.close();
        },
      });
    }
    return this.#stream;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#stream?.locked ?? false);
  }

  /** The body's bytes (a copy), once; through the stream when `body` was already taken. */
  async #consume(): Promise<Uint8Array<ArrayBuffer>> {
    if (this.#stream) return new Uint8Array(await new Response(this.#stream).arrayBuffer());
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return this.#bytes.slice();
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.#consume()).buffer as ArrayBuffer;
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#consume();
  }

  override async text(): Promise<string> {
    return decoder.decode(await this.#consume());
  }

  override async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  override async blob(): Promise<Blob> {
    return new Blob([await this.#consume()], { type: this.headers.get("content-type") ?? "" });
  }

  override async formData(): Promise<FormData> {
    return new Response(await this.#consume(), { headers: this.headers }).formData();
  }

  override clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    const init = { status: this.status, statusText: this.statusText, headers: this.headers };
    if (!this.#stream) return new InMemoryResponse(this.#bytes, init);
    const [mine, theirs] = this.#stream.tee();
    this.#stream = mine;
    return new Response(theirs, init);
  }
}

/**
 * The body bytes (and untouched headers) of an {@link InMemoryResponse} not
 * yet read by anyone, for an adapter to write directly; `undefined` for any
 * other response.
 */
export function takeInMemoryBody(response: Response): InMemoryBody | undefined {
  return response instanceof InMemoryResponse ? response.take() : undefined;
}
