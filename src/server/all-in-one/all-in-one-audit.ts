/**
 * The audit log and sign-in throttling in the all-in-one server (issue 45):
 * the log on the registry's storage, the auditor fed by the services' events
 * and by the sign-in guard, and the administrators' `GET <prefix>/audit`:
 *
 * | Query | |
 * |---|---|
 * | `after=SEQ` | records after this sequence number (the `next` of the previous page) |
 * | `limit=N` | at most N records (default 100, at most 1000) |
 * | `since=TIME` | only records at or after an RFC 3339 time |
 * | `project=NAME` | only records of this project |
 *
 * The answer is `{"records":[…],"next":SEQ}` (`next` only when more may
 * follow), with a `Link: <…?after=SEQ…>; rel="next"` header as the registry's
 * lists have.
 *
 * @module
 */
import { createAuditor, type Auditor } from "../../audit/auditor.js";
import { storageAuditLog, type AuditLog } from "../../audit/log.js";
import type { EventHook } from "../../events/hook.js";
import { clientAddress } from "../../http/client-address.js";
import type { LogHook } from "../../http/log.js";
import { json, methodNotAllowed } from "../../http/response.js";
import type { StorageDriver } from "../../storage/driver.js";
import { createThrottle, type Throttle } from "../../throttle/index.js";
import type { Authenticator, UserStore } from "../../users/index.js";
import type { Route } from "./all-in-one-routes.js";
import type { SignInGuard } from "./sign-in-guard.js";

/** The audit parts of one server. */
export interface AuditParts {
  log: AuditLog;
  auditor: Auditor;
  guard: SignInGuard;
}

/** The log, the auditor (its events to `onEvent`, the notifier) and the guard's throttle. */
export function auditParts(storage: StorageDriver, trustProxy: boolean, logHook: LogHook, onEvent: EventHook | undefined, throttle: Throttle = createThrottle()): AuditParts {
  const log = storageAuditLog(storage);
  const addressOf = (request: Request) => clientAddress(request, trustProxy);
  const auditor = createAuditor({ log, logHook, addressOf, ...(onEvent ? { onEvent } : {}) });
  return { log, auditor, guard: { throttle, auditor, addressOf } };
}

function failure(code: string, message: string, status: number): Response {
  const headers: HeadersInit = status === 401 ? { "www-authenticate": 'Basic realm="registry-kit"' } : {};
  return json({ errors: [{ code, message }] }, status, headers);
}

/** `GET <prefix>/audit`: administrators only, authenticated as the rest of the management API. */
export function auditRoute(prefix: string, log: AuditLog, users: UserStore, authenticate: Authenticator): Route {
  const path = `${prefix}/audit`;
  return {
    matches: (p) => p === path || p === `${path}/`,
    handler: async (request) => {
      const method = request.method.toUpperCase();
      if (method !== "GET" && method !== "HEAD") return methodNotAllowed(["GET", "HEAD"], { errors: [{ code: "METHOD_NOT_ALLOWED", message: "method not allowed" }] });
      const caller = await authenticate(request);
      if (!caller) return failure("UNAUTHORIZED", "authentication required", 401);
      const record = caller.id !== undefined ? await users.getById(caller.id) : await users.getByUsername(caller.name);
      if (!record || record.username.toLowerCase() !== caller.name.toLowerCase()) return failure("UNAUTHORIZED", "invalid credentials", 401);
      if (!record.sysadmin) return failure("FORBIDDEN", "administrators only", 403);
      const url = new URL(request.url);
      const query = parseQuery(url.searchParams);
      if (typeof query === "string") return failure("BAD_REQUEST", query, 400);
      const page = await log.list(query);
      const headers: HeadersInit = {};
      if (page.next !== undefined) {
        const next = new URL(url);
        next.searchParams.set("after", String(page.next));
        headers.link = `<${next.pathname}${next.search}>; rel="next"`;
      }
      return json({ records: page.records, ...(page.next !== undefined ? { next: page.next } : {}) }, 200, headers);
    },
  };
}

/** The list query of `params`, or why it is refused. */
function parseQuery(params: URLSearchParams): { after?: number; limit?: number; since?: Date; project?: string } | string {
  const out: { after?: number; limit?: number; since?: Date; project?: string } = {};
  const after = params.get("after");
  if (after !== null) {
    if (!/^\d{1,12}$/.test(after)) return "after must be a sequence number";
    out.after = Number(after);
  }
  const limit = params.get("limit");
  if (limit !== null) {
    if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000) return "limit must be 1 to 1000";
    out.limit = Number(limit);
  }
  const since = params.get("since");
  if (since !== null) {
    const time = Date.parse(since);
    if (!Number.isFinite(time)) return "since must be an RFC 3339 time";
    out.since = new Date(time);
  }
  const project = params.get("project");
  if (project !== null) out.project = project;
  return out;
}
