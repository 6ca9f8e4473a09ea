/**
 * The token service (the `realm`): Distribution's token endpoint (`GET`
 * with Basic credentials or anonymous) and its OAuth2 variant (`POST` form
 * with the password and refresh_token grants). It identifies the caller, asks
 * the access policy what to grant, and signs a JWT with the granted `access`.
 *
 * @module
 */
import { AuthError } from "./errors.js";
import { BodyTooLargeError, readLimitedText } from "../http/body.js";
import { silent, type LogHook } from "../http/log.js";
import { readsRequestBasics } from "../http/request-basics.js";
import { json } from "../http/response.js";
import type { Access, CredentialCheck, Principal } from "./access.js";
import { bindingClaims, matchesBinding } from "./binding.js";
import { parseBasic } from "./credentials.js";
import { b64url } from "../util/bytes.js";
import { signJwt, type TokenClaims } from "./jwt.js";
import type { KeyProvider } from "./keys.js";
import { parseTokenForm, parseTokenQuery, type TokenRequest } from "./oauth-form.js";
import { defaultPolicy, type AccessPolicy } from "./policy.js";
import { createTokenVerifier, type TokenVerifier, type VerifiedToken } from "./verifier.js";

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
}

/** The JSON body of a successful token response. */
export interface TokenResponseBody {
  /** The signed JWT. */
  token: string;
  /** The same JWT, under the OAuth2 name. */
  access_token: string;
  /** Seconds the token is valid. */
  expires_in: number;
  /** Time of issue, RFC 3339 UTC without fractional seconds. */
  issued_at: string;
  /** Present when a refresh token was asked for (`offline_token=true` or `access_type=offline`) and can be re-checked. */
  refresh_token?: string;
}

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/**
 * An error answer: `{error, details}` (what Docker clients and skopeo print);
 * OAuth2 POST answers also carry RFC 6749's `error_description`.
 */
function errorBody(request: Request, status: number, error: string, details: string, extra?: HeadersInit, oauth = false): Response {
  const headers = new Headers(extra);
  for (const [k, v] of Object.entries(NO_STORE)) headers.set(k, v);
  return json(oauth ? { error, error_description: details, details } : { error, details }, status, headers, request);
}

let lastSecond = NaN;
let lastRfc3339 = "";

function rfc3339(seconds: number): string {
  // Tokens issued in the same second share the string.
  if (seconds !== lastSecond) {
    lastRfc3339 = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
    lastSecond = seconds;
  }
  return lastRfc3339;
}

/** Random bytes drawn in blocks (one getRandomValues call per 256 ids); every byte is used once. */
const ID_BYTES = 16;
const pool = new Uint8Array(ID_BYTES * 256);
let poolOffset = pool.length;

function randomId(): string {
  if (poolOffset === pool.length) {
    crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  const id = b64url(pool.subarray(poolOffset, poolOffset + ID_BYTES));
  poolOffset += ID_BYTES;
  return id;
}

/** Keep only what was requested: `*` granted becomes the requested actions. */
function clip(granted: readonly Access[], requested: readonly Access[]): Access[] {
  const out: Access[] = [];
  for (const req of requested) {
    const actions = new Set<string>();
    for (const g of granted) {
      if (g.type !== req.type || g.name !== req.name) continue;
      for (const a of req.actions) if (g.actions.includes("*") || g.actions.includes(a)) actions.add(a);
    }
    if (actions.size > 0) out.push({ type: req.type, name: req.name, actions: req.actions.filter((a) => actions.has(a)) });
  }
  return out;
}

/**
 * Create the token endpoint handler. Answers `GET` (Distribution token spec)
 * and `POST` (OAuth2 form); every error is JSON `{error, error_description,
 * details}`; wrong credentials are 401 `{"error":"unauthorized","details":"bad or missing credentials"}`
 * with `Www-Authenticate: Basic realm="…"`.
 */
export function createTokenService(options: TokenServiceOptions): (request: Request) => Promise<Response> {
  if (!options.issuer) throw new AuthError("config", "token service: issuer is required");
  const services = [options.service].flat();
  if (services.length === 0 || services.some((s) => !s)) throw new AuthError("config", "token service: service is required");
  if (!options.keys) throw new AuthError("config", "token service: keys are required");
  const log = options.log ?? silent;
  const now = options.now ?? Date.now;
  const expiresIn = options.expiresIn ?? 60;
  const refreshLifetime = options.refreshTokenLifetime ?? 30 * 86_400;
  const maxScopes = options.maxScopes ?? 64;
  const maxFormBytes = options.maxFormBytes ?? 64 * 1024;
  const basicRealm = options.basicRealm ?? "registry-kit";
  const policy = options.policy ?? defaultPolicy({ publicRepositories: options.publicRepositories ?? [] });
  const check = options.checkCredentials;
  const lookupUser =
    options.lookupUser ??
    (check && typeof (check as { lookupUser?: unknown }).lookupUser === "function"
      ? (check as unknown as { lookupUser: (n: string) => Promise<Principal | undefined> }).lookupUser
      : undefined);
  const refreshAudience = options.issuer;
  let refreshVerifier: TokenVerifier | undefined;
  const verifyRefresh = (token: string) => {
    refreshVerifier ??= createTokenVerifier({
      issuer: options.issuer,
      audience: refreshAudience,
      keys: options.keys,
      tokenUse: "refresh",
      leewaySeconds: 0,
      cacheSize: 0,
      now,
    });
    return refreshVerifier.verify(token);
  };

  type Fail = (status: number, error: string, details: string, headers?: HeadersInit) => Response;

  async function authenticate(req: TokenRequest, request: Request, fail: Fail): Promise<{ caller: Principal | undefined } | Response> {
    const unauthorized = () => fail(401, "unauthorized", "bad or missing credentials", { "www-authenticate": `Basic realm="${basicRealm}"` });
    if (req.grant === "refresh_token") return refreshCaller(req.refreshToken!, fail);
    let creds: { username: string; password: string } | null | undefined;
    if (req.grant === "password") creds = { username: req.username!, password: req.password! };
    else creds = parseBasic(request.headers.get("authorization"));
    if (creds === undefined) {
      if (options.allowAnonymous === false) return unauthorized();
      return { caller: undefined };
    }
    if (creds === null) {
      log({ level: "info", msg: "malformed basic credentials" });
      return unauthorized();
    }
    const caller = check ? await check(creds.username, creds.password) : undefined;
    if (!caller) {
      log({ level: "info", msg: "bad credentials", user: creds.username });
      return unauthorized();
    }
    if (req.account !== undefined && req.account !== caller.name) {
      log({ level: "debug", msg: "account parameter differs from the authenticated user", account: req.account, user: caller.name });
    }
    return { caller };
  }

  /**
   * The caller of a refresh grant: the token's user as the credential source
   * knows it now, only while it still has the `uid` and credential version
   * the token was issued for (a password change, a reset, a role change or a
   * re-created name refuses it, RFC 6749 §5.2 `invalid_grant`).
   */
  async function refreshCaller(token: string, fail: Fail): Promise<{ caller: Principal } | Response> {
    const refused = (reason: string, user?: string) => {
      log({ level: "info", msg: "refresh token refused", reason, ...(user !== undefined && { user }) });
      return fail(400, "invalid_grant", "refresh token is invalid or expired");
    };
    let verified: VerifiedToken;
    try {
      verified = await verifyRefresh(token);
    } catch (e) {
      return refused((e as Error).message);
    }
    const sub = verified.subject;
    const user = lookupUser && sub ? await lookupUser(sub) : undefined;
    if (!user) return refused("user no longer exists", sub);
    if (!matchesBinding(verified.claims, user)) return refused("the user's credentials changed since the token was issued", sub);
    return { caller: user };
  }

  async function issue(request: Request, req: TokenRequest, caller: Principal | undefined, service: string): Promise<Response> {
    const granted = clip(await policy(caller, req.scopes), req.scopes);
    const key = await options.keys.signingKey();
    const iat = Math.floor(now() / 1000);
    const claims: TokenClaims = {
      iss: options.issuer,
      sub: caller?.name ?? "",
      aud: service,
      exp: iat + expiresIn,
      nbf: iat,
      iat,
      jti: randomId(),
      access: granted,
      // Management tokens are access tokens too: bound like refresh tokens.
      ...(caller && bindingClaims(caller)),
    };
    const token = await signJwt(claims, key, { x5c: options.x5c !== false });
    const body: TokenResponseBody = { token, access_token: token, expires_in: expiresIn, issued_at: rfc3339(iat) };
    if (req.offline && caller && lookupUser) {
      const refreshClaims: TokenClaims = {
        iss: options.issuer,
        sub: caller.name,
        aud: refreshAudience,
        exp: iat + refreshLifetime,
        nbf: iat,
        iat,
        jti: randomId(),
        token_use: "refresh",
        ...bindingClaims(caller),
      };
      body.refresh_token = await signJwt(refreshClaims, key, { x5c: false });
    }
    log({
      level: "debug",
      msg: "token issued",
      user: caller?.name ?? "",
      service,
      requested: req.scopes.length,
      granted: granted.length,
      clientId: req.clientId,
    });
    return json(body, 200, NO_STORE, request);
  }

  // Reads the method, URL, Authorization and the POST form only: the Node adapter may give it a light request.
  return readsRequestBasics(async (request: Request): Promise<Response> => {
    const method = request.method.toUpperCase();
    const fail: Fail = (status, error, details, headers) => errorBody(request, status, error, details, headers, method === "POST");
    let req: ReturnType<typeof parseTokenQuery>;
    if (method === "GET" || method === "HEAD") {
      req = parseTokenQuery(new URL(request.url).searchParams, maxScopes);
    } else if (method === "POST") {
      let text: string;
      try {
        text = await readLimitedText(request, maxFormBytes);
      } catch (e) {
        if (e instanceof BodyTooLargeError) return fail(413, "invalid_request", "request body too large");
        return fail(400, "invalid_request", "unreadable request body");
      }
      req = parseTokenForm(new URLSearchParams(text), maxScopes);
    } else {
      return fail(405, "invalid_request", "method not allowed", { allow: "GET, POST" });
    }
    if ("error" in req) return fail(400, req.error, req.description);
    const service = req.service ?? services[0]!;
    if (!services.includes(service)) return fail(400, "invalid_request", `unknown service ${JSON.stringify(service)}`);
    try {
      const who = await authenticate(req, request, fail);
      if (who instanceof Response) return who;
      return await issue(request, req, who.caller, service);
    } catch (e) {
      log({ level: "error", msg: "token service failure", error: (e as Error)?.message ?? String(e) });
      return fail(500, "server_error", "the token could not be issued");
    }
  });
}
