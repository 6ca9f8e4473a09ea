/**
 * Who a request was authorized as: the token authorizer records the verified
 * token of each request it lets through, and other services (the registry's
 * per-caller upload limits) read it back. A WeakMap keyed by the `Request`, so
 * nothing outlives the request. Kept apart from the verifier so that readers do
 * not pull in JWT verification.
 *
 * @module
 */

/** What is recorded per request; the verifier's `VerifiedToken` is one. */
export interface Principal {
  /** `sub` of the token, `""` for anonymous. */
  subject: string;
}

const principals = new WeakMap<Request, Principal>();

/** Record who `request` was authorized as. */
export function rememberPrincipal(request: Request, principal: Principal): void {
  principals.set(request, principal);
}

/** Who `request` was authorized as, if a token authorizer let it through. */
export function principalOf(request: Request): Principal | undefined {
  return principals.get(request);
}
