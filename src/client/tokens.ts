/**
 * Getting and caching bearer tokens from a token endpoint (the `realm` of a
 * challenge). Tokens are cached per registry and scope set until shortly
 * before they expire.
 *
 * @module
 */
import { errorFromResponse } from "./errors.js";

/** What a Bearer challenge told us about where to get tokens. */
export interface TokenEndpoint {
  realm: string;
  service?: string;
}

interface CachedToken {
  token: string;
  /** Epoch milliseconds after which the token must not be used. */
  renewAt: number;
}

/** Options of {@link TokenCache}. */
export interface TokenCacheOptions {
  fetch: () => typeof fetch;
  /** Renew this many seconds before the token's expiry (default 10). */
  renewBeforeSeconds?: number;
  userAgent?: string;
  /** The clock, for tests. */
  now?: () => number;
}

/** Default token lifetime when the endpoint gives no `expires_in` (the spec's 60 s). */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 60;

/**
 * Caches tokens by registry and scope set. A scope set is the sorted,
 * de-duplicated list of scope strings, so `pull` and `pull,push` requests for
 * one repository use separate tokens, as real clients do.
 */
export class TokenCache {
  readonly #tokens = new Map<string, CachedToken>();
  readonly #options: TokenCacheOptions;

  constructor(options: TokenCacheOptions) {
    this.#options = options;
  }

  /** A valid token for these scopes, from the cache or a fresh request. */
  async get(
    endpoint: TokenEndpoint,
    scopes: readonly string[],
    basic: { auth: string; account: string } | undefined,
    signal?: AbortSignal,
  ): Promise<string> {
    const key = cacheKey(endpoint, scopes, basic?.account);
    const now = this.#now();
    const hit = this.#tokens.get(key);
    if (hit && hit.renewAt > now) return hit.token;
    const fresh = await this.#request(endpoint, scopes, basic, signal);
    this.#tokens.set(key, fresh);
    return fresh.token;
  }

  /** Forget a token (after the registry refused it). */
  invalidate(endpoint: TokenEndpoint, scopes: readonly string[], account?: string): void {
    this.#tokens.delete(cacheKey(endpoint, scopes, account));
  }

  /** Forget every token (after a login or logout). */
  clear(): void {
    this.#tokens.clear();
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  async #request(
    endpoint: TokenEndpoint,
    scopes: readonly string[],
    basic: { auth: string; account: string } | undefined,
    signal?: AbortSignal,
  ): Promise<CachedToken> {
    const url = new URL(endpoint.realm);
    if (basic) url.searchParams.set("account", basic.account);
    for (const scope of scopes) url.searchParams.append("scope", scope);
    if (endpoint.service !== undefined) url.searchParams.set("service", endpoint.service);
    const headers = new Headers({ accept: "application/json" });
    if (basic) headers.set("authorization", `Basic ${basic.auth}`);
    if (this.#options.userAgent) headers.set("user-agent", this.#options.userAgent);
    const requestedAt = this.#now();
    const response = await this.#options.fetch()(url, { headers, signal });
    if (!response.ok) throw await errorFromResponse(response, "token request failed");
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    const token = typeof body.token === "string" ? body.token : typeof body.access_token === "string" ? body.access_token : undefined;
    if (!token) throw await errorFromResponse(new Response(null, { status: 502 }), "token endpoint returned no token");
    const lifetime = Number.isFinite(body.expires_in) && Number(body.expires_in) > 0 ? Number(body.expires_in) : DEFAULT_TOKEN_LIFETIME_SECONDS;
    // Count from when we asked: a skewed issued_at must not stretch the lifetime.
    const skew = Math.min(this.#options.renewBeforeSeconds ?? 10, lifetime / 2);
    return { token, renewAt: requestedAt + (lifetime - skew) * 1000 };
  }
}

function cacheKey(endpoint: TokenEndpoint, scopes: readonly string[], account = ""): string {
  return JSON.stringify([endpoint.realm, endpoint.service ?? "", account, [...new Set(scopes)].sort()]);
}
