/**
 * The registry's 401 answer: the `Www-Authenticate: Bearer …` challenge and
 * the OCI `UNAUTHORIZED` body, exactly as CNCF Distribution writes them.
 *
 * @module
 */
import { inMemoryResponse } from "../../http/in-memory-response.js";
import { errorBody, errorHeaders } from "../../oci/errors.js";
import type { Access } from "../access.js";
import { formatScope } from "../scope.js";

/** The `error=` parameter of a Bearer challenge (RFC 6750 §3.1). */
export type ChallengeError = "invalid_token" | "insufficient_scope";

/** The parts of a Bearer challenge. */
export interface Challenge {
  /** The token endpoint URL. */
  realm: string;
  /** The registry's service name (the tokens' audience). */
  service: string;
  /** What the route needs; empty for `GET /v2/` (then no `scope=`). */
  needed?: readonly Access[];
  /** Why a presented token was refused; absent when no token was sent. */
  error?: ChallengeError;
}

export function quote(value: string): string {
  // Most values (URLs, names, scopes) have nothing to escape: no regular expression for them.
  if (value.indexOf('"') < 0 && value.indexOf("\\") < 0) return `"${value}"`;
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/**
 * Format a challenge: `Bearer realm="…",service="…"[,scope="…"][,error="…"]`,
 * in that order, comma without space, every value quoted, never `error_description`.
 */
export function formatChallenge(challenge: Challenge): string {
  return challengeHeader(challengePrefix(challenge.realm, challenge.service), challenge.needed, challenge.error);
}

/** `Bearer realm="…",service="…"`: how every challenge starts. */
export function challengePrefix(realm: string, service: string): string {
  return `Bearer realm=${quote(realm)},service=${quote(service)}`;
}

/** {@link formatChallenge} after its realm and service, already formatted as `prefix`. */
export function challengeHeader(prefix: string, needed: readonly Access[] | undefined, error: ChallengeError | undefined): string {
  let header = prefix;
  if (needed && needed.length > 0) header += `,scope=${quote(formatScope(needed))}`;
  if (error) header += `,error="${error}"`;
  return header;
}

/** The `detail` of the UNAUTHORIZED body: one `{Type, Class, Name, Action}` per needed action, or null. */
export function challengeDetail(needed: readonly Access[] | undefined): unknown {
  if (!needed || needed.length === 0) return null;
  return needed.flatMap((a) => a.actions.map((action) => ({ Type: a.type, Class: "", Name: a.name, Action: action })));
}

/**
 * The full 401 response: challenge header, OCI `UNAUTHORIZED` body
 * (`authentication required`), JSON content type and API-version headers.
 * For `HEAD` the body is left off but `Content-Length` still announces it.
 * Given the `request` it answers, the response can take its adapter's
 * in-memory fast lane.
 */
export async function challengeResponse(challenge: Challenge, method = "GET", request?: Request): Promise<Response> {
  return unauthorized(formatChallenge(challenge), challenge.needed, method, request);
}

/**
 * A 401 with the given `Www-Authenticate` value and the OCI `UNAUTHORIZED`
 * body of {@link challengeResponse} (for a Bearer or a Basic challenge).
 */
export async function unauthorizedResponse(
  wwwAuthenticate: string, needed: readonly Access[] | undefined, method = "GET", request?: Request,
): Promise<Response> {
  return unauthorized(wwwAuthenticate, needed, method, request);
}

/** {@link unauthorizedResponse}, synchronous: the authorizers answer every refused request with it. */
export function unauthorized(wwwAuthenticate: string, needed: readonly Access[] | undefined, method: string, request: Request | undefined): Response {
  const body = unauthorizedBody(needed);
  const headers = errorHeaders([["Www-Authenticate", wwwAuthenticate]], body.byteLength);
  // HEAD: the length the GET's body would have, and no body.
  if (method.toUpperCase() === "HEAD") return new Response(null, { status: 401, headers });
  return inMemoryResponse(request, body, { status: 401, headers });
}

/** UNAUTHORIZED bodies by what was needed: the same few repositories are refused over and over. Never modified. */
const bodies = new Map<string, Uint8Array>();
const MAX_BODIES = 256;

/** The OCI `UNAUTHORIZED` body for `needed`, built once per distinct `needed`. */
function unauthorizedBody(needed: readonly Access[] | undefined): Uint8Array {
  let key = "";
  // NUL cannot occur in a type, name or action: distinct `needed` get distinct keys.
  for (const a of needed ?? []) key += `${a.type}\0${a.name}\0${a.actions.join("\0")}\n`;
  let body = bodies.get(key);
  if (body === undefined) {
    body = errorBody([{ code: "UNAUTHORIZED", message: "authentication required", detail: challengeDetail(needed) }]);
    if (bodies.size >= MAX_BODIES) bodies.delete(bodies.keys().next().value!);
    bodies.set(key, body);
  }
  return body;
}
