/**
 * Who is asking the token service, by grant: Basic credentials or none on
 * `GET` (`basic`), a user name and password (`password`), or a refresh token
 * re-checked against the user as it is now (`refresh_token`).
 *
 * @module
 */
import type { Principal } from "../access.js";
import { matchesBinding } from "../binding.js";
import { parseBasic } from "../basic/credentials.js";
import type { TokenRequest } from "./oauth-form.js";
import type { Fail, TokenServiceContext } from "./token-context.js";
import type { VerifiedToken } from "../verifier/verifier.js";

/** The authenticated caller; `undefined` for an anonymous one. */
export interface Caller {
  /** The principal the token is issued to, if any. */
  caller: Principal | undefined;
}

/**
 * The caller of `req`, or the refusal: 401 with `Www-Authenticate: Basic` for
 * bad, malformed or (with `allowAnonymous: false`) missing credentials; 400
 * `invalid_grant` for a refused refresh token.
 */
export async function authenticateCaller(
  ctx: TokenServiceContext,
  req: TokenRequest,
  request: Request,
  fail: Fail,
): Promise<Caller | Response> {
  const unauthorized = () => fail(401, "unauthorized", "bad or missing credentials", { "www-authenticate": `Basic realm="${ctx.basicRealm}"` });
  if (req.grant === "refresh_token") return refreshCaller(ctx, req.refreshToken!, fail);
  let creds: { username: string; password: string } | null | undefined;
  if (req.grant === "password") creds = { username: req.username!, password: req.password! };
  else creds = parseBasic(request.headers.get("authorization"));
  if (creds === undefined) {
    if (!ctx.allowAnonymous) return unauthorized();
    return { caller: undefined };
  }
  if (creds === null) {
    ctx.log({ level: "info", msg: "malformed basic credentials" });
    return unauthorized();
  }
  const caller = ctx.checkCredentials ? await ctx.checkCredentials(creds.username, creds.password) : undefined;
  if (!caller) {
    ctx.log({ level: "info", msg: "bad credentials", user: creds.username });
    return unauthorized();
  }
  if (req.account !== undefined && req.account !== caller.name) {
    ctx.log({ level: "debug", msg: "account parameter differs from the authenticated user", account: req.account, user: caller.name });
  }
  return { caller };
}

/**
 * The caller of a refresh grant: the token's user as the credential source
 * knows it now, only while it still has the `uid` and credential version
 * the token was issued for (a password change, a reset, a role change or a
 * re-created name refuses it, RFC 6749 §5.2 `invalid_grant`).
 */
async function refreshCaller(ctx: TokenServiceContext, token: string, fail: Fail): Promise<Caller | Response> {
  const refused = (reason: string, user?: string) => {
    ctx.log({ level: "info", msg: "refresh token refused", reason, ...(user !== undefined && { user }) });
    return fail(400, "invalid_grant", "refresh token is invalid or expired");
  };
  let verified: VerifiedToken;
  try {
    verified = await ctx.verifyRefresh(token);
  } catch (e) {
    return refused((e as Error).message);
  }
  const sub = verified.subject;
  const user = ctx.lookupUser && sub ? await ctx.lookupUser(sub) : undefined;
  if (!user) return refused("user no longer exists", sub);
  if (!matchesBinding(verified.claims, user)) return refused("the user's credentials changed since the token was issued", sub);
  return { caller: user };
}
