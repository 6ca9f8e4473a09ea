/**
 * The real `Request` the Node adapter makes (see {@link NodeRequest}).
 *
 * @module
 */
import { IN_MEMORY_RESPONSES } from "../http/in-memory-response.js";
import { ADAPTER_CAPABILITIES, type AdapterCapabilities } from "../runtime/adapter-capabilities.js";

/**
 * The `Request` handlers get from the adapter: a real `Request` whose
 * `signal` is the adapter's own (aborted when the client goes away).
 *
 * Why not `new Request(url, { signal })`: undici makes every request follow
 * the given signal through an event listener, `setMaxListeners` and a
 * finalization registry, which costs about 15 µs, more than the rest of the
 * constructor; a small request spends a tenth of its time there. A copy made
 * with `new Request(request)` or `request.clone()` gets a signal of its own
 * that does not follow the client.
 */
export class NodeRequest extends Request {
  constructor(url: string, init: RequestInit, signal: AbortSignal | (() => AbortSignal)) {
    super(url, init);
    if (typeof signal === "function") Object.defineProperty(this, "signal", { get: signal, enumerable: false });
    else Object.defineProperty(this, "signal", { value: signal, enumerable: false });
  }

  /** writeResponse takes in-memory bodies directly (see in-memory-response.ts). On the prototype: nothing to do per request. */
  get [ADAPTER_CAPABILITIES](): AdapterCapabilities {
    return IN_MEMORY_RESPONSES;
  }
}
