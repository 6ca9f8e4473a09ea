/**
 * The last steps of the token service: the policy's decision clipped to what
 * was asked, the access token (and, when asked for, a refresh token) signed,
 * and the JSON answer.
 *
 * @module
 */
import { json } from "../../http/response.js";
import { b64url } from "../../util/bytes.js";
import type { Access, Principal } from "../access.js";
import { bindingClaims } from "../binding.js";
import { signJwt, type SigningKey, type TokenClaims } from "../jwt/jwt.js";
import type { TokenRequest } from "./oauth-form.js";
import { NO_STORE, type TokenServiceContext } from "./token-context.js";

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

/**
 * Sign the tokens `caller` is granted for `req` and answer `request` with 200
 * and {@link TokenResponseBody} (in the adapter's in-memory lane).
 */
export async function issueToken(
  ctx: TokenServiceContext,
  request: Request,
  req: TokenRequest,
  caller: Principal | undefined,
  service: string,
): Promise<Response> {
  const granted = clip(await ctx.policy(caller, req.scopes), req.scopes);
  const key = await ctx.keys.signingKey();
  const iat = Math.floor(ctx.now() / 1000);
  const claims: TokenClaims = {
    iss: ctx.issuer,
    sub: caller?.name ?? "",
    aud: service,
    exp: iat + ctx.expiresIn,
    nbf: iat,
    iat,
    jti: randomId(),
    access: granted,
    // Management tokens are access tokens too: bound like refresh tokens.
    ...(caller && bindingClaims(caller)),
  };
  const token = await signJwt(claims, key, { x5c: ctx.x5c });
  const body: TokenResponseBody = { token, access_token: token, expires_in: ctx.expiresIn, issued_at: rfc3339(iat) };
  if (req.offline && caller && ctx.lookupUser) body.refresh_token = await signRefreshToken(ctx, caller, key, iat);
  ctx.log({
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

/** A refresh token for `caller`: audience the issuer, bound to the caller's `uid` and credential version. */
function signRefreshToken(ctx: TokenServiceContext, caller: Principal, key: SigningKey, iat: number): Promise<string> {
  const claims: TokenClaims = {
    iss: ctx.issuer,
    sub: caller.name,
    aud: ctx.issuer,
    exp: iat + ctx.refreshLifetime,
    nbf: iat,
    iat,
    jti: randomId(),
    token_use: "refresh",
    ...bindingClaims(caller),
  };
  return signJwt(claims, key, { x5c: false });
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
