/**
 * The state the token service's modules share: its options resolved once by
 * `createTokenService` (defaults applied, the refresh-token verifier built on
 * first use), and the error answer every step gives.
 *
 * @module
 */
import { json } from "../../http/response.js";
import type { LogHook } from "../../http/log.js";
import type { CredentialCheck, Principal } from "../access.js";
import type { KeyProvider } from "../keys/keys.js";
import type { AccessPolicy } from "./policy.js";
import type { VerifiedToken } from "../verifier/verifier.js";

/** One token service's settings, every default applied. */
export interface TokenServiceContext {
  /** `iss` of every token, and the audience of refresh tokens. */
  readonly issuer: string;
  /** The services tokens may be issued for; the first is the default. */
  readonly services: readonly string[];
  /** The signing key. */
  readonly keys: KeyProvider;
  /** Checks Basic and `grant_type=password` credentials; without it every credential is refused. */
  readonly checkCredentials: CredentialCheck | undefined;
  /** Re-checks the user of a refresh token; without it no refresh tokens are issued. */
  readonly lookupUser: ((name: string) => Promise<Principal | undefined>) | undefined;
  /** Decides what a caller is granted. */
  readonly policy: AccessPolicy;
  /** Callers without credentials get a token. */
  readonly allowAnonymous: boolean;
  /** Access-token lifetime, seconds. */
  readonly expiresIn: number;
  /** Refresh-token lifetime, seconds. */
  readonly refreshLifetime: number;
  /** Put the signing certificate chain in `x5c` of access tokens. */
  readonly x5c: boolean;
  /** Most scope items in one request. */
  readonly maxScopes: number;
  /** Largest POST form, bytes. */
  readonly maxFormBytes: number;
  /** `realm` of the `Www-Authenticate: Basic` answer to bad credentials. */
  readonly basicRealm: string;
  /** The log hook. */
  readonly log: LogHook;
  /** Clock, ms since epoch. */
  readonly now: () => number;
  /** Verifies a refresh token (signature, issuer, audience, `token_use`, times). */
  readonly verifyRefresh: (token: string) => Promise<VerifiedToken>;
}

/** Answers one request with an error; made per request by {@link failFor}. */
export type Fail = (status: number, error: string, details: string, headers?: HeadersInit) => Response;

/** Headers of every token-service answer: tokens and refusals are never cached. */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/**
 * The error answer to `request`: `{error, details}` (what Docker clients and
 * skopeo print); OAuth2 POST answers also carry RFC 6749's `error_description`.
 * Given the request, the answer can take its adapter's in-memory lane.
 */
export function failFor(request: Request): Fail {
  const oauth = request.method.toUpperCase() === "POST";
  return (status, error, details, extra) => {
    const headers = new Headers(extra);
    for (const [k, v] of Object.entries(NO_STORE)) headers.set(k, v);
    return json(oauth ? { error, error_description: details, details } : { error, details }, status, headers, request);
  };
}
