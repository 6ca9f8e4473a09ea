/**
 * The lighter `Request` look-alike the Node adapter gives handlers marked
 * `readsRequestBasics` for requests without a body. Local to the adapter:
 * nothing global is changed, and the handlers only see a `Request`.
 *
 * @module
 */
import { InMemoryResponse } from "../http/in-memory-response.js";
import { ADAPTER_CAPABILITIES, type AdapterCapabilities, type HeaderPairs } from "../runtime/adapter-capabilities.js";
import { NodeRequest } from "./node-request.js";

/** What a light request answers from. */
export interface LightState {
  method: string;
  url: string;
  pairs: [string, string][];
  headers?: Headers;
  signal: () => AbortSignal;
  real?: Request;
}

const STATE = Symbol("registry-kit.lightRequest");

/**
 * A request without a body for a handler that reads only its basics
 * (`readsRequestBasics`: registry-kit's registry, token service and
 * all-in-one server). `method`, `url`, `headers` (a `Headers` made on first
 * read), `signal` and `body` (null) are answered directly; every other member
 * of `Request` is taken from a real one made on first use. It is
 * `instanceof Request`, but undici's `new Request(request)` and
 * `fetch(request)` read internal slots it does not have: that is why only
 * marked handlers get one. Why at all: a real `Request` costs about a tenth
 * of a small request's CPU (undici makes an `AbortSignal` for each).
 */
class LightRequest implements AdapterCapabilities {
  readonly [STATE]: LightState;
  constructor(state: LightState) {
    this[STATE] = state;
  }
  get method(): string {
    return this[STATE].method;
  }
  get url(): string {
    return this[STATE].url;
  }
  get headers(): Headers {
    const state = this[STATE];
    return (state.headers ??= new Headers(state.pairs));
  }
  /** Its own capabilities (src/runtime/adapter-capabilities.ts): no object made per request. */
  get [ADAPTER_CAPABILITIES](): AdapterCapabilities {
    return this;
  }
  /**
   * The header lines as received, for readers that need a few values without a
   * `Headers` (src/http/header-pairs.ts); none once `headers` exists, since a
   * caller may have changed it.
   */
  get headerPairs(): HeaderPairs | undefined {
    const state = this[STATE];
    return state.headers === undefined ? state.pairs : undefined;
  }
  /** writeResponse takes in-memory bodies directly (see in-memory-response.ts). */
  respondInMemory(body: Uint8Array, init: ResponseInit): Response {
    return new InMemoryResponse(body, init);
  }
  get signal(): AbortSignal {
    return this[STATE].signal();
  }
  get body(): null {
    return null;
  }
  get bodyUsed(): boolean {
    return this[STATE].real?.bodyUsed ?? false;
  }
}

function realRequest(light: LightRequest): Request {
  const state = light[STATE];
  return (state.real ??= new NodeRequest(state.url, { method: state.method, headers: light.headers }, state.signal));
}

let delegating = false;

/**
 * Give LightRequest.prototype every other member of `Request.prototype`
 * (cache, mode, clone(), text(), inspect, …), each answered by the real
 * request, and make it inherit from `Request.prototype` (so `instanceof
 * Request` holds). Done once, on the first light request, not at import;
 * `Request.prototype` itself is only read, never changed (a test checks).
 */
function delegateToRealRequest(): void {
  delegating = true;
  Object.setPrototypeOf(LightRequest.prototype, Request.prototype);
  for (const key of Reflect.ownKeys(Request.prototype)) {
    if (key === "constructor" || Object.prototype.hasOwnProperty.call(LightRequest.prototype, key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(Request.prototype, key)!;
    if (descriptor.get) {
      const get = descriptor.get;
      Object.defineProperty(LightRequest.prototype, key, { configurable: true, get(this: LightRequest) { return get.call(realRequest(this)); } });
    } else if (typeof descriptor.value === "function") {
      const method = descriptor.value as (...args: unknown[]) => unknown;
      Object.defineProperty(LightRequest.prototype, key, {
        configurable: true,
        writable: true,
        value(this: LightRequest, ...args: unknown[]) {
          return method.apply(realRequest(this), args);
        },
      });
    }
  }
}

/** A light request (see {@link LightRequest}) for the adapter to hand a handler marked `readsRequestBasics`. */
export function lightRequest(state: LightState): Request {
  if (!delegating) delegateToRealRequest();
  return new LightRequest(state) as unknown as Request;
}
