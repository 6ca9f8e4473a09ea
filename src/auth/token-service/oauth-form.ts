/**
 * Reading token requests: the `GET` query of Distribution's token spec and
 * the `POST` OAuth2 form of its oauth spec, into one {@link TokenRequest}.
 *
 * @module
 */
import type { Access } from "../access.js";
import { parseScopes } from "../scope.js";

/** A token request, whichever way it came. */
export interface TokenRequest {
  /** `basic`: GET with optional Basic credentials; `password` / `refresh_token`: the OAuth2 POST grants. */
  grant: "basic" | "password" | "refresh_token";
  /** The requested `service` (the token's audience), if given. */
  service?: string;
  /** Requested access, merged and de-duplicated. */
  scopes: Access[];
  /** `client_id` (or `client-id`). Informational. */
  clientId?: string;
  /** `account` (GET). Informational. */
  account?: string;
  /** A refresh token is wanted (`offline_token=true` or `access_type=offline`). */
  offline: boolean;
  /** For `password`. */
  username?: string;
  /** For `password`. */
  password?: string;
  /** For `refresh_token`. */
  refreshToken?: string;
}

/** A request that cannot be served, as an OAuth2-style error code and a human description. */
export interface TokenRequestError {
  /** The OAuth2 error code sent as `error`. */
  error: "invalid_request" | "invalid_scope" | "unsupported_grant_type";
  /** A human-readable reason, sent as `details` (and `error_description` on POST). */
  description: string;
}

function scopesOf(values: string[], maxScopes: number): Access[] | TokenRequestError {
  // Count the items as sent (before merging duplicates), so the work of parsing is bounded too.
  let items = 0;
  for (const v of values) for (const item of v.split(" ")) if (item !== "" && ++items > maxScopes) return tooMany(maxScopes);
  const scopes = parseScopes(values);
  if (!scopes) return { error: "invalid_scope", description: "malformed scope" };
  if (scopes.length > maxScopes) return tooMany(maxScopes);
  return scopes;
}

function tooMany(maxScopes: number): TokenRequestError {
  return { error: "invalid_scope", description: `too many scopes (at most ${maxScopes})` };
}

function truthy(v: string | null): boolean {
  return v !== null && /^(1|true|yes|on)$/i.test(v);
}

function common(params: URLSearchParams, maxScopes: number): Omit<TokenRequest, "grant" | "offline"> | TokenRequestError {
  const scopes = scopesOf(params.getAll("scope"), maxScopes);
  if (!Array.isArray(scopes)) return scopes;
  const out: Omit<TokenRequest, "grant" | "offline"> = { scopes };
  const service = params.get("service");
  if (service !== null && service !== "") out.service = service;
  const clientId = params.get("client_id") ?? params.get("client-id");
  if (clientId !== null) out.clientId = clientId;
  const account = params.get("account");
  if (account !== null && account !== "") out.account = account;
  return out;
}

/** Read a `GET` token request (`service`, repeated `scope`, `client_id`, `account`, `offline_token`). */
export function parseTokenQuery(params: URLSearchParams, maxScopes: number): TokenRequest | TokenRequestError {
  const base = common(params, maxScopes);
  if ("error" in base) return base;
  return { ...base, grant: "basic", offline: truthy(params.get("offline_token")) };
}

/**
 * Read a `POST` OAuth2 form: `grant_type=password` (with `username`,
 * `password`) or `grant_type=refresh_token` (with `refresh_token`),
 * `access_type=offline`, space-separated `scope`, `service`, `client_id`.
 */
export function parseTokenForm(params: URLSearchParams, maxScopes: number): TokenRequest | TokenRequestError {
  const base = common(params, maxScopes);
  if ("error" in base) return base;
  const grantType = params.get("grant_type");
  const offline = params.get("access_type") === "offline";
  if (grantType === "password") {
    const username = params.get("username");
    const password = params.get("password");
    if (!username || password === null) return { error: "invalid_request", description: "username and password are required" };
    return { ...base, grant: "password", offline, username, password };
  }
  if (grantType === "refresh_token") {
    const refreshToken = params.get("refresh_token");
    if (!refreshToken) return { error: "invalid_request", description: "refresh_token is required" };
    return { ...base, grant: "refresh_token", offline, refreshToken };
  }
  if (grantType === null) return { error: "invalid_request", description: "grant_type is required" };
  return { error: "unsupported_grant_type", description: `grant_type ${JSON.stringify(grantType)} is not supported` };
}
