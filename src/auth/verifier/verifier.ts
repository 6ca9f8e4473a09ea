/**
 * Token verification (issuer, audience, times, algorithm allow-list, key by
 * x5c/kid/thumbprint, signature) with a cache of verified tokens, and the
 * registry's {@link createTokenAuthorizer}.
 *
 * @module
 */
import { AuthError, JwtError } from "../errors.js";
import { silent, type LogHook } from "../../http/log.js";
import type { Access, Authorizer } from "../access.js";
import { allowList, type JwsAlgorithm } from "../jwt/algorithms.js";
import { parseCertBundle, resolveSigningKey, trustStoreFromKeys, type TrustStore } from "../trust/cert-bundle.js";
import { assertJwksShape, parseJwks, type JsonWebKeySet } from "../trust/jwks.js";
import { challengeHeader, challengePrefix, unauthorized, type ChallengeError } from "./challenge.js";
import { decodeJwt, verifySignature, type JwtHeader, type TokenClaims } from "../jwt/jwt.js";
import { checkHmacSecret, importHmacSecret, verificationKeysFromPem, type KeyProvider } from "../keys/keys.js";
import { covers, indexAccess, type AccessIndex } from "../scope.js";
import { LruCache } from "./token-cache.js";
import { headerValue } from "../../http/header-pairs.js";
import { readsRequestBasics } from "../../runtime/adapter-capabilities.js";
import { principalOf, rememberPrincipal } from "../principal.js";

/**
 * Where a verifier finds the keys it trusts: `rootCertBundle` and/or `jwks`,
 * or `keys`, or `trustStore` (or `hmacSecret` alone).
 */
export interface TrustOptions {
  /** PEM text of the root certificate bundle (one or more certificates). */
  rootCertBundle?: string;
  /**
   * A JSON Web Key Set (its JSON text, or the object) whose keys are trusted,
   * each found by the `kid` of the token header (Distribution 3's
   * `auth.token.jwks`), alone or beside `rootCertBundle`. A JWK's `alg`, when
   * set, limits its key to that algorithm. A malformed set is refused at
   * construction; a key that cannot be imported fails the first
   * verification (check it up front with `parseJwks`).
   */
  jwks?: string | JsonWebKeySet;
  /** A key provider whose `verificationKeys()` are trusted (rotation: list several). */
  keys?: KeyProvider;
  /** A ready trust store. */
  trustStore?: TrustStore;
  /** A shared secret for HS256 tokens; also adds HS256 to the allow-list. Never a PEM. */
  hmacSecret?: string | Uint8Array;
}

/** Options of {@link createTokenVerifier} and {@link verifyToken}. */
export interface TokenVerifierOptions extends TrustOptions {
  /** Required `iss`. */
  issuer: string;
  /** Required audience: `aud` must equal it, or be an array containing it. */
  audience: string;
  /** Clock leeway for `exp` and `nbf`, seconds. Default 60 (as Distribution). */
  leewaySeconds?: number;
  /** Accepted algorithms. Default {@link DEFAULT_ALGORITHMS} (RS256/384/512, ES256/384/512). */
  algorithms?: readonly JwsAlgorithm[];
  /** Verified tokens kept in memory until they expire. Default 4096; 0 disables. */
  cacheSize?: number;
  /** Clock, ms since epoch (for tests). Default `Date.now`. */
  now?: () => number;
  /**
   * Which tokens to accept: `access` (default) refuses tokens marked
   * `token_use: "refresh"`; `refresh` accepts only those (the token service's own use).
   */
  tokenUse?: "access" | "refresh";
}

/** A token that passed every check. */
export interface VerifiedToken {
  /** Every claim of the token. */
  claims: TokenClaims;
  /** `sub`, `""` for anonymous. */
  subject: string;
  /** The granted `access` (malformed entries ignored). */
  access: Access[];
  /** Granted access compiled for {@link covers}. */
  index: AccessIndex;
  /** `exp` in seconds since epoch. */
  expires: number;
}

/** Verifies tokens against one configuration. */
export interface TokenVerifier {
  /** Resolve to the verified token, or reject with a {@link JwtError} whose message is the (log-only) reason. */
  verify(token: string): Promise<VerifiedToken>;
}

async function loadTrust(options: TrustOptions): Promise<() => Promise<TrustStore>> {
  if (options.trustStore) {
    const t = options.trustStore;
    return async () => t;
  }
  if (options.jwks !== undefined) {
    const jwks = await parseJwks(options.jwks);
    const bundle = options.rootCertBundle !== undefined ? await verificationKeysFromPem(options.rootCertBundle) : [];
    if (jwks.length === 0 && bundle.length === 0) {
      throw new AuthError("invalid_key", "no token signing key: the JWKS has no signing key" + (options.rootCertBundle !== undefined ? " and the root certificate bundle none either" : ""));
    }
    const t = trustStoreFromKeys(bundle, jwks);
    return async () => t;
  }
  if (options.rootCertBundle !== undefined) {
    const t = await parseCertBundle(options.rootCertBundle);
    return async () => t;
  }
  if (options.keys) {
    const provider = options.keys;
    let last: readonly unknown[] | undefined;
    let store: TrustStore | undefined;
    return async () => {
      const keys = await provider.verificationKeys();
      if (keys !== last || !store) {
        store = trustStoreFromKeys(keys);
        last = keys;
      }
      return store;
    };
  }
  const empty = trustStoreFromKeys([]);
  return async () => empty;
}

function hasTrust(options: TrustOptions): boolean {
  return Boolean(options.rootCertBundle || options.jwks !== undefined || options.keys || options.trustStore || options.hmacSecret !== undefined);
}

function audienceMatches(aud: unknown, audience: string): boolean {
  if (typeof aud === "string") return aud === audience;
  if (Array.isArray(aud)) return aud.some((a) => a === audience);
  return false;
}

/**
 * RFC 7515 §4.1.11: a recipient must refuse a token whose `crit` names an
 * extension it does not understand. This verifier understands none, so any
 * `crit` is refused; one that is not a non-empty list of distinct names is
 * malformed (the RFC forbids an empty list).
 */
function checkCritical(header: JwtHeader): void {
  if (!("crit" in header)) return;
  const crit = header.crit;
  const wellFormed =
    Array.isArray(crit) && crit.length > 0 && crit.every((n) => typeof n === "string" && n !== "") && new Set(crit).size === crit.length;
  if (!wellFormed) throw new JwtError("malformed_token", "malformed token: crit");
  throw new JwtError("unsupported_critical", `unsupported critical header parameter ${JSON.stringify(crit[0])}`);
}

/**
 * A NumericDate claim, when present, must be a safe integer: JSON allows
 * `1e400` (Infinity: a token that would never expire), fractions and strings,
 * which Distribution's `int64` claims refuse as well.
 */
function numericDate(payload: TokenClaims, name: "exp" | "nbf" | "iat"): number | undefined {
  const value = payload[name];
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value)) throw new JwtError("malformed_token", `malformed token: ${name} is not an integer`);
  return value as number;
}

function iso(seconds: number): string {
  return Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : String(seconds);
}

/** Refuse a token whose `exp` (required), `nbf` or `iat` is malformed, or whose times exclude `nowSec` give or take `leeway`. */
function checkTimes(payload: TokenClaims, nowSec: number, leeway: number): void {
  const exp = numericDate(payload, "exp");
  if (exp === undefined) throw new JwtError("malformed_token", "malformed token: exp is missing");
  const nbf = numericDate(payload, "nbf");
  numericDate(payload, "iat");
  if (nowSec > exp + leeway) throw new JwtError("expired", `token not to be used after ${iso(exp + leeway)} - currently ${iso(nowSec)}`);
  if (nbf !== undefined && nowSec < nbf - leeway) {
    throw new JwtError("not_yet_valid", `token not to be used before ${iso(nbf - leeway)} - currently ${iso(nowSec)}`);
  }
}

/**
 * Build a verifier. Throws at construction when no trust source is given,
 * when `hmacSecret` is a PEM or too short, or when the allow-list names an
 * unknown algorithm or `none`.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  if (!options.issuer) throw new AuthError("config", "token verifier: issuer is required");
  if (!options.audience) throw new AuthError("config", "token verifier: audience (service) is required");
  if (!hasTrust(options)) {
    throw new AuthError("config", "token verifier: rootCertBundle or jwks (or keys, trustStore, hmacSecret) is required");
  }
  if (options.jwks !== undefined) {
    if (options.keys || options.trustStore) throw new AuthError("config", "token verifier: jwks combines with rootCertBundle only, not with keys or trustStore");
    assertJwksShape(options.jwks);
  }
  if (options.hmacSecret !== undefined) checkHmacSecret(options.hmacSecret);
  const allowed = new Set(allowList(options.algorithms));
  if (options.hmacSecret !== undefined) allowed.add("HS256");
  else allowed.delete("HS256");
  const leeway = options.leewaySeconds ?? 60;
  const now = options.now ?? Date.now;
  const cache = new LruCache<VerifiedToken>(options.cacheSize ?? 4096);
  const trust = loadTrust(options);
  const hmac = options.hmacSecret === undefined ? undefined : importHmacSecret(options.hmacSecret, "verify");
  // Surface configuration errors (bad bundle) to the first caller, not as an unhandled rejection.
  trust.catch(() => {});
  hmac?.catch(() => {});

  async function verifyUncached(token: string, nowMs: number): Promise<VerifiedToken> {
    const decoded = decodeJwt(token);
    const { header, payload } = decoded;
    const alg = header.alg;
    if (decoded.signature.length === 0 || alg === "none") throw new JwtError("unsigned", "token has no signature");
    checkCritical(header);
    if (!allowed.has(alg as JwsAlgorithm)) throw new JwtError("algorithm_not_allowed", `unable to verify signature: algorithm ${JSON.stringify(alg)} not allowed`);
    if (payload.iss !== options.issuer) throw new JwtError("wrong_issuer", `token from untrusted issuer: ${JSON.stringify(payload.iss)}`);
    if (!audienceMatches(payload.aud, options.audience)) throw new JwtError("wrong_audience", `token intended for another audience: ${JSON.stringify(payload.aud)}`);
    checkTimes(payload, nowMs / 1000, leeway);
    if (options.tokenUse === "refresh") {
      if (payload.token_use !== "refresh") throw new JwtError("wrong_token_use", "not a refresh token");
    } else if (payload.token_use === "refresh") throw new JwtError("wrong_token_use", "refresh token used as an access token");
    if (payload.sub !== undefined && typeof payload.sub !== "string") throw new JwtError("malformed_token", "malformed token: sub is not a string");
    let key: CryptoKey;
    if (alg === "HS256") {
      key = await hmac!;
    } else {
      const store = await (await trust)();
      const vk = await resolveSigningKey(store, header, new Date(nowMs));
      if (!vk.supports(alg as JwsAlgorithm)) throw new JwtError("algorithm_not_allowed", `unable to verify signature: key type ${vk.kind.kty} cannot verify ${alg}`);
      key = await vk.cryptoKey(alg as JwsAlgorithm);
    }
    if (!(await verifySignature(decoded, alg as JwsAlgorithm, key))) throw new JwtError("bad_signature", `unable to verify token signature: invalid ${alg} signature`);
    const index = indexAccess(payload.access);
    const access: Access[] = [...index].map(([k, actions]) => {
      const i = k.indexOf("\u0000");
      return { type: k.slice(0, i), name: k.slice(i + 1), actions: [...actions] };
    });
    return { claims: payload, subject: payload.sub ?? "", access, index, expires: payload.exp as number };
  }

  return {
    async verify(token: string): Promise<VerifiedToken> {
      const nowMs = now();
      const hit = cache.get(token);
      if (hit) {
        if (nowMs / 1000 <= hit.expires + leeway) return hit;
        cache.delete(token);
        throw new JwtError("expired", `token not to be used after ${iso(hit.expires + leeway)} - currently ${iso(nowMs / 1000)}`);
      }
      const verified = await verifyUncached(token, nowMs);
      cache.set(token, verified);
      return verified;
    },
  };
}

const verifiers = new WeakMap<TokenVerifierOptions, TokenVerifier>();

/**
 * Verify one token, for services other than the registry (the management API
 * accepts Bearer tokens whose audience is the management service). The
 * verifier (and its cache) is kept per `options` object, so pass the same
 * object each time. Rejects with {@link JwtError}.
 */
export function verifyToken(token: string, options: TokenVerifierOptions): Promise<VerifiedToken> {
  let v = verifiers.get(options);
  if (!v) verifiers.set(options, (v = createTokenVerifier(options)));
  return v.verify(token);
}

/** Options of {@link createTokenAuthorizer}: Distribution's `auth.token` block. */
export interface TokenAuthorizerOptions extends TrustOptions {
  /** The token endpoint URL, sent in challenges; required, as in Distribution, even with `autoRedirect` (which then builds the realm per request). */
  realm: string;
  /**
   * Distribution 3's `autoredirect`: the challenge's realm is built from each
   * request as `<scheme>://<host><path>`: the request's host (its `Host`),
   * `X-Forwarded-Proto` when it says `http` or `https`, else the scheme the
   * request came on (Distribution says `https` then), and `path` (default
   * {@link DEFAULT_AUTO_REDIRECT_PATH}, Distribution's `autoredirectpath`).
   * For a registry reached under several names, each client is sent to the
   * token endpoint on the name it used.
   */
  autoRedirect?: boolean | {
    /** The token endpoint's path on the request's host (Distribution's `autoredirectpath`). */
    path?: string;
  };
  /** This registry's name: sent in challenges and required as `aud`. */
  service: string;
  /** Required `iss`. */
  issuer: string;
  /** Clock leeway for `exp`/`nbf`, seconds. Default 60. */
  leewaySeconds?: number;
  /** Accepted algorithms. Default RS256/384/512, ES256/384/512. */
  algorithms?: readonly JwsAlgorithm[];
  /** Verified-token cache size. Default 4096. */
  cacheSize?: number;
  /** Reasons for refusals go here at `info`. */
  log?: LogHook;
  /** Clock, ms since epoch (for tests). */
  now?: () => number;
}

/** Distribution 3's default `autoredirectpath`. */
export const DEFAULT_AUTO_REDIRECT_PATH = "/auth/token";

/** The realm of a challenge to `request`: fixed, or built from the request with `autoRedirect`. */
function realmFor(options: TokenAuthorizerOptions): (request: Request) => string {
  const auto = options.autoRedirect;
  if (!auto) return () => options.realm;
  const path = (typeof auto === "object" ? auto.path : undefined) ?? DEFAULT_AUTO_REDIRECT_PATH;
  if (!path.startsWith("/") || /[\s"\\?#]/.test(path)) {
    throw new AuthError("config", `token auth: autoRedirect path must be an absolute path without spaces, quotes, ? or #: ${JSON.stringify(path)}`);
  }
  return (request) => {
    const url = new URL(request.url);
    const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    const scheme = forwarded === "http" || forwarded === "https" ? forwarded : url.protocol.slice(0, -1);
    return `${scheme}://${url.host}${path}`;
  };
}

/** Extract a non-empty Bearer token; anything else (Basic, empty Bearer) counts as no credentials. */
export function bearerToken(authorization: string | null): string | undefined {
  if (!authorization) return undefined;
  const space = authorization.indexOf(" ");
  if (space < 0 || authorization.slice(0, space).toLowerCase() !== "bearer") return undefined;
  const token = authorization.slice(space + 1).trim();
  return token === "" ? undefined : token;
}

/** The verified token an authorizer from {@link createTokenAuthorizer} accepted for this request, if any. */
export function verifiedTokenOf(request: Request): VerifiedToken | undefined {
  return principalOf(request) as VerifiedToken | undefined;
}

/**
 * The registry's token authorizer (Distribution's `auth.token`). Answers
 * every refusal with 401, the Bearer challenge and the OCI `UNAUTHORIZED`
 * body: no token → no `error=`; a bad token → `error="invalid_token"`; a
 * valid token short of rights → `error="insufficient_scope"` with the full
 * scope the route needs. Reasons go to `log` at `info`, never to the client.
 *
 * Throws at construction unless realm, service, issuer and a trust source
 * (`rootCertBundle`, or `keys`) are all given.
 */
export function createTokenAuthorizer(options: TokenAuthorizerOptions): Authorizer {
  const missing: string[] = (["realm", "service", "issuer"] as const).filter((k) => !options[k]);
  if (!hasTrust(options)) missing.push("rootCertBundle or jwks");
  if (missing.length > 0) throw new AuthError("config", `token auth: ${missing.join(", ")} required (auth.token needs realm, service, issuer and rootcertbundle or jwks)`);
  const log = options.log ?? silent;
  const verifier = createTokenVerifier({ ...options, audience: options.service });
  const { service } = options;
  const realmOf = realmFor(options);
  // `Bearer realm="…",service="…"`, quoted once when the realm is fixed.
  const fixedPrefix = options.autoRedirect ? undefined : challengePrefix(options.realm, service);
  const challenge = (request: Request, needed: readonly Access[], error?: ChallengeError): Response => {
    const prefix = fixedPrefix ?? challengePrefix(realmOf(request), service);
    return unauthorized(challengeHeader(prefix, needed, error), needed, request.method, request);
  };

  return readsRequestBasics<Authorizer>(async (request, needed) => {
    const token = bearerToken(headerValue(request, "authorization"));
    if (token === undefined) {
      log({ level: "info", msg: "authorization token required", method: request.method, url: request.url });
      return challenge(request, needed);
    }
    let verified: VerifiedToken;
    try {
      verified = await verifier.verify(token);
    } catch (e) {
      const reason = e instanceof JwtError ? e.message : `token verification failed: ${(e as Error)?.message ?? String(e)}`;
      log({ level: "info", msg: "invalid token", reason, method: request.method, url: request.url });
      return challenge(request, needed, "invalid_token");
    }
    if (!covers(verified.index, needed)) {
      log({ level: "info", msg: "insufficient scope", subject: verified.subject, method: request.method, url: request.url });
      return challenge(request, needed, "insufficient_scope");
    }
    rememberPrincipal(request, verified);
    return undefined;
  });
}
