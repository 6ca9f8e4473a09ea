/**
 * The client address of a request. A `Request` has no socket, so the adapter
 * that made it (`registry-kit/node`) remembers its peer address here; the
 * services that record or throttle by address read it back. Behind a proxy
 * the server trusts (`registrykit.trustproxy`), the address is the last
 * `X-Forwarded-For` entry, the one that proxy appended: entries before it
 * were written by the client and prove nothing.
 *
 * @module
 */

const peers = new WeakMap<object, string>();

/** Record the socket peer of `request` (called by adapters). */
export function rememberPeer(request: object, address: string | undefined): void {
  if (address) peers.set(request, address.startsWith("::ffff:") ? address.slice(7) : address);
}

/** The peer address an adapter recorded for `request`, if any. */
export function peerAddress(request: object): string | undefined {
  return peers.get(request);
}

/**
 * The client address of `request`: with `trustProxy`, the last
 * `X-Forwarded-For` entry when there is one, else the socket peer; without,
 * always the socket peer (headers are the client's to choose). `undefined`
 * when neither is known (a handler called in process).
 */
export function clientAddress(request: Request, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for");
    const last = forwarded?.split(",").pop()?.trim();
    if (last) return last.slice(0, 64);
  }
  return peerAddress(request);
}
