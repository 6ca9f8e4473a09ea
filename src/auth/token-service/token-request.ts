/**
 * The first step of the token service: the request read into a
 * {@link TokenRequest}, from the `GET` query (Distribution's token spec) or
 * the `POST` OAuth2 form, and the `service` it asks for checked.
 *
 * @module
 */
import { BodyTooLargeError, readLimitedText } from "../../http/body.js";
import { parseTokenForm, parseTokenQuery, type TokenRequest } from "./oauth-form.js";
import type { Fail, TokenServiceContext } from "./token-context.js";

/** A readable token request and the service (audience) its token is for. */
export interface ReadTokenRequest {
  /** The parsed request. */
  req: TokenRequest;
  /** `req.service`, or the default service. */
  service: string;
}

/** Read `request` (method already upper-cased), or the error answer: 405, 413, 400. */
export async function readTokenRequest(
  ctx: TokenServiceContext,
  request: Request,
  method: string,
  fail: Fail,
): Promise<ReadTokenRequest | Response> {
  let req: ReturnType<typeof parseTokenQuery>;
  if (method === "GET" || method === "HEAD") {
    req = parseTokenQuery(new URL(request.url).searchParams, ctx.maxScopes);
  } else if (method === "POST") {
    let text: string;
    try {
      text = await readLimitedText(request, ctx.maxFormBytes);
    } catch (e) {
      if (e instanceof BodyTooLargeError) return fail(413, "invalid_request", "request body too large");
      return fail(400, "invalid_request", "unreadable request body");
    }
    req = parseTokenForm(new URLSearchParams(text), ctx.maxScopes);
  } else {
    return fail(405, "invalid_request", "method not allowed", { allow: "GET, POST" });
  }
  if ("error" in req) return fail(400, req.error, req.description);
  const service = req.service ?? ctx.services[0]!;
  if (!ctx.services.includes(service)) return fail(400, "invalid_request", `unknown service ${JSON.stringify(service)}`);
  return { req, service };
}
