/**
 * The registry's refusals in the audit log: a write refused by a write
 * policy (403 `DENIED`: an immutable tag, a quota) is `policy.denied`, and a
 * request whose token lacks the access it needs (401 `insufficient_scope`)
 * is `access.denied`. Read from the answer, so the registry stays as it is.
 *
 * Who: the `sub` of the request's Bearer token, read without checking its
 * signature. That is sound only because both answers come after the
 * registry verified the token (an unverifiable one is `invalid_token`,
 * which is not recorded here).
 *
 * @module
 */
import type { Auditor } from "../../audit/auditor.js";
import { projectOf, type AuditEntry } from "../../audit/record.js";
import { fromB64url } from "../../util/bytes.js";
import type { Route } from "./all-in-one-routes.js";

/** `route` (the registry's) with its refusals audited. */
export function auditRegistryRefusals(route: Route, auditor: Auditor): Route {
  return {
    ...route,
    handler: async (request) => {
      const response = await route.handler(request);
      const action = refusalOf(request, response);
      if (action) await auditor.record(await entryOf(action, request, response), request);
      return response;
    },
  };
}

function refusalOf(request: Request, response: Response): string | undefined {
  const method = request.method.toUpperCase();
  if (response.status === 403 && method !== "GET" && method !== "HEAD") return "policy.denied";
  if (response.status === 401 && /error="insufficient_scope"/.test(response.headers.get("www-authenticate") ?? "") && bearerSubject(request) !== undefined) return "access.denied";
  return undefined;
}

async function entryOf(action: string, request: Request, response: Response): Promise<AuditEntry> {
  const url = new URL(request.url);
  const repository = /\/v2\/(.+?)\/(?:manifests|blobs|tags|referrers)\//.exec(url.pathname)?.[1];
  const name = bearerSubject(request);
  const project = projectOf(repository);
  const detail = action === "policy.denied" ? await firstMessage(response) : "the token does not grant the access this request needs";
  return {
    action,
    who: name !== undefined ? { kind: "user", name } : { kind: "anonymous" },
    from: { channel: "registry" },
    result: "refused",
    target: { method: request.method.toUpperCase(), path: url.pathname, ...(repository ? { repository } : {}) },
    ...(project ? { project } : {}),
    ...(detail ? { detail } : {}),
  };
}

/** The `sub` of a Bearer JWT, unverified (see the module comment), or `undefined`. */
function bearerSubject(request: Request): string | undefined {
  const match = /^Bearer +([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]*$/i.exec(request.headers.get("authorization") ?? "");
  if (!match) return undefined;
  try {
    const claims = JSON.parse(new TextDecoder().decode(fromB64url(match[2]!))) as { sub?: unknown };
    return typeof claims.sub === "string" && claims.sub !== "" ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/** The message of an OCI error body, read from a copy of the answer. */
async function firstMessage(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { errors?: Array<{ message?: unknown }> };
    const message = body.errors?.[0]?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}
