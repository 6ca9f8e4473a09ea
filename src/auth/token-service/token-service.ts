/**
 * The token service (the `realm`): Distribution's token endpoint (`GET`
 * with Basic credentials or anonymous) and its OAuth2 variant (`POST` form
 * with the password and refresh_token grants). It identifies the caller, asks
 * the access policy what to grant, and signs a JWT with the granted `access`.
 *
 * The steps live in their own modules over one {@link TokenServiceContext}
 * (token-context.ts): reading the request (token-request.ts), authenticating
 * the caller by grant (token-caller.ts), the policy decision, minting and the
 * answer (token-issue.ts).
 *
 * @module
 */
import { eventEmitter, type EventHook } from "../../events/hook.js";
import { AuthError } from "../errors.js";
import { silent, type LogHook } from "../../http/log.js";
import { readsRequestBasics } from "../../runtime/adapter-capabilities.js";
import type { CredentialCheck, Principal } from "../access.js";
import type { KeyProvider } from "../keys/keys.js";
import { defaultPolicy, type AccessPolicy } from "./policy.js";
import { authenticateCaller } from "./token-caller.js";
import { failFor, type Fail, type TokenServiceContext } from "./token-context.js";
import { issueToken } from "./token-issue.js";
import { readTokenRequest } from "./token-request.js";
import { createTokenVerifier, type TokenVerifier } from "../verifier/verifier.js";
import type { CounterSeries, Family, Metrics } from "../../util/metrics.js";

export type { TokenResponseBody } from "./token-issue.js";

/** Options of {@link createTokenService}. */
export interface TokenServiceOptions {
  /** `iss` of every token; the registry's `auth.token.issuer`. */
  issuer: string;
  /** Service name(s) tokens may be issued for (`aud`). A request without `service` gets the first. */
  service: string | readonly string[];
  /** The signing key (and, for refresh tokens, the keys to verify them). */
  keys: KeyProvider;
  /** Checks Basic (and `grant_type=password`) credentials. Without it, every credential is refused. */
  checkCredentials?: CredentialCheck;
  /**
   * Looks a user up by name, to re-check refresh tokens: a deleted user's
   * refresh token stops working, and one whose principal's `uid` or
   * `credentialVersion` differs from the token's is refused (see
   * `bindingClaims`). Defaults to `checkCredentials.lookupUser` when that
   * exists (as on `memoryCredentials()` and `storeCredentialCheck()`).
   * Without it no refresh tokens are issued.
   */
  lookupUser?: (name: string) => Promise<Principal | undefined>;
  /** Access policy. Default {@link defaultPolicy} with `publicRepositories`. */
  policy?: AccessPolicy;
  /** Repository globs anonymous callers may pull (used by the default policy only). */
  publicRepositories?: readonly string[];
  /** Issue tokens to callers without credentials. Default true. */
  allowAnonymous?: boolean;
  /** Access-token lifetime in seconds (`expires_in`). Default 60, the spec's default. */
  expiresIn?: number;
  /** Refresh-token lifetime in seconds. Default 30 days. */
  refreshTokenLifetime?: number;
  /** Put the signing certificate chain in `x5c` (when the key has one). Default true. */
  x5c?: boolean;
  /**
   * Most scope items in one request (each `scope` parameter, and each
   * space-separated entry of one, counts, duplicates included); more gets 400
   * `invalid_scope`. Default 64.
   */
  maxScopes?: number;
  /** Largest POST form accepted, bytes. Default 64 KiB. */
  maxFormBytes?: number;
  /** `realm` of the `Www-Authenticate: Basic` answer to bad credentials. Default `registry-kit`. */
  basicRealm?: string;
  /** Receives log events: refusals at `info`, issued tokens at `debug`, failures at `error`. Never passwords or tokens. */
  log?: LogHook;
  /** Clock, ms since epoch (for tests). */
  now?: () => number;
  /**
   * Count every answer into these metrics as
   * `registrykit_token_requests_total{outcome,reason}`: `outcome` is `issued`,
   * `refused` (a 4xx) or `failed` (a 5xx), `reason` the OAuth2 `error` code of a
   * refusal (`unauthorized`, `invalid_request`, `invalid_grant`, …), empty when
   * issued. Default: none.
   */
  metrics?: Metrics;
  /**
   * Receives `token.issued` and `token.refused` (bad credentials, refused
   * grant, bad request) events. A function can neither fail nor slow a request.
   */
  onEvent?: EventHook;
}

/**
 * Create the token endpoint handler. Answers `GET` (Distribution token spec)
 * and `POST` (OAuth2 form); every error is JSON `{error, error_description,
 * details}`; wrong credentials are 401 `{"error":"unauthorized","details":"bad or missing credentials"}`
 * with `Www-Authenticate: Basic realm="…"`.
 */
export function createTokenService(options: TokenServiceOptions): (request: Request) => Promise<Response> {
  const ctx = resolveOptions(options);
  const answers = options.metrics?.counter(
    "registrykit_token_requests_total",
    "Token requests answered, by outcome (issued, refused, failed) and the OAuth2 error code of a refusal",
    ["outcome", "reason"],
  );
  const issued = answers?.labels("issued", "");
  const emit = eventEmitter({ onEvent: options.onEvent, log: ctx.log });
  /** `response`, after its event: 200 is an issued token, 400/401/403 a refusal. */
  const answered = async (request: Request, response: Response, user: string | undefined): Promise<Response> => {
    const status = response.status;
    if (status !== 200 && status !== 400 && status !== 401 && status !== 403) return response;
    const target = user === undefined ? {} : { user };
    await emit(request, { action: status === 200 ? "token.issued" : "token.refused", target, ...(user !== undefined && { actor: user }) });
    return response;
  };
  // Reads the method, URL, Authorization and the POST form only: the Node adapter may give it a light request.
  return readsRequestBasics(async (request: Request): Promise<Response> => {
    const method = request.method.toUpperCase();
    const fail = answers ? counted(failFor(request), answers) : failFor(request);
    const read = await readTokenRequest(ctx, request, method, fail);
    if (read instanceof Response) return answered(request, read, undefined);
    try {
      const who = await authenticateCaller(ctx, read.req, request, fail);
      if (who instanceof Response) return answered(request, who, undefined);
      const response = await issueToken(ctx, request, read.req, who.caller, read.service);
      if (response.ok) issued?.inc();
      return await answered(request, response, who.caller?.name);
    } catch (e) {
      ctx.log({ level: "error", msg: "token service failure", error: (e as Error)?.message ?? String(e) });
      return fail(500, "server_error", "the token could not be issued");
    }
  });
}

/** `fail`, counting each refusal into `answers`. */
function counted(fail: Fail, answers: Family<CounterSeries>): Fail {
  return (status, error, details, headers) => {
    answers.labels(status >= 500 ? "failed" : "refused", error).inc();
    return fail(status, error, details, headers);
  };
}

/** Check the options (`AuthError` code `config`) and apply the defaults. */
function resolveOptions(options: TokenServiceOptions): TokenServiceContext {
  if (!options.issuer) throw new AuthError("config", "token service: issuer is required");
  const services = [options.service].flat();
  if (services.length === 0 || services.some((s) => !s)) throw new AuthError("config", "token service: service is required");
  if (!options.keys) throw new AuthError("config", "token service: keys are required");
  const now = options.now ?? Date.now;
  const check = options.checkCredentials;
  const lookupUser =
    options.lookupUser ??
    (check && typeof (check as { lookupUser?: unknown }).lookupUser === "function"
      ? (check as unknown as { lookupUser: (n: string) => Promise<Principal | undefined> }).lookupUser
      : undefined);
  let refreshVerifier: TokenVerifier | undefined;
  const verifyRefresh = (token: string) => {
    // Built on first use: most services never see a refresh grant.
    refreshVerifier ??= createTokenVerifier({
      issuer: options.issuer,
      audience: options.issuer,
      keys: options.keys,
      tokenUse: "refresh",
      leewaySeconds: 0,
      cacheSize: 0,
      now,
    });
    return refreshVerifier.verify(token);
  };
  return {
    issuer: options.issuer,
    services,
    keys: options.keys,
    checkCredentials: check,
    lookupUser,
    policy: options.policy ?? defaultPolicy({ publicRepositories: options.publicRepositories ?? [] }),
    allowAnonymous: options.allowAnonymous !== false,
    expiresIn: options.expiresIn ?? 60,
    refreshLifetime: options.refreshTokenLifetime ?? 30 * 86_400,
    x5c: options.x5c !== false,
    maxScopes: options.maxScopes ?? 64,
    maxFormBytes: options.maxFormBytes ?? 64 * 1024,
    basicRealm: options.basicRealm ?? "registry-kit",
    log: options.log ?? silent,
    now,
    verifyRefresh,
  };
}
