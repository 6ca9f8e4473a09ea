/**
 * The sign-in guard of the all-in-one server: around the web page's sign-in,
 * the token service and Basic on the management API, it refuses a throttled
 * (name, address) with 429 before the password is checked, counts each
 * answer as a failed or a successful sign-in (src/throttle/), and records
 * every sign-in in the audit log. It reads only what the request carries and
 * the status of the answer, so the services stay as they are.
 *
 * @module
 */
import type { Auditor } from "../../audit/auditor.js";
import type { AuditEntry } from "../../audit/record.js";
import { parseBasic } from "../../auth/basic/credentials.js";
import { errorResponse } from "../../oci/errors.js";
import type { Throttle } from "../../throttle/index.js";
import type { Route } from "./all-in-one-routes.js";

/** What the guard works with. */
export interface SignInGuard {
  throttle: Throttle;
  auditor: Auditor | undefined;
  /** The client address (src/http/client-address.ts, with the server's `trustproxy`). */
  addressOf: (request: Request) => string | undefined;
}

/** Which door a route is, and how it tells a sign-in attempt and its outcome. */
export interface SignInDoor {
  /** `ui`, `token` or `api`: the record's `from.channel`. */
  channel: string;
  /** The user name a request tries to sign in as, or `undefined` when it is no sign-in. */
  attempt(request: Request): Promise<string | undefined>;
  /** Whether the answer accepted the credentials; `undefined` when it says nothing about them. */
  accepted(response: Response): boolean | undefined;
}

/** The largest form read for the name (a sign-in form is far smaller). */
const FORM_LIMIT = 16 * 1024;

/** `route` with its sign-ins throttled and audited. */
export function guardRoute(route: Route, door: SignInDoor, guard: SignInGuard): Route {
  return { ...route, handler: guarded(route.handler, door, guard) };
}

function guarded(handler: Route["handler"], door: SignInDoor, guard: SignInGuard): Route["handler"] {
  return async (request) => {
    const name = await door.attempt(request);
    if (name === undefined) return handler(request);
    const address = guard.addressOf(request);
    const entry = (result: AuditEntry["result"], detail?: string): AuditEntry => ({
      action: "signin", who: { kind: "user", name }, from: { channel: door.channel }, result, ...(detail ? { detail } : {}),
    });
    const wait = guard.throttle.retryAfter(name, address);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      await guard.auditor?.record(entry("locked", `throttled for ${seconds} s`), request);
      return errorResponse("TOOMANYREQUESTS", "too many failed sign-ins; try again later", {
        detail: { retryAfterSeconds: seconds }, headers: { "retry-after": String(seconds) },
      });
    }
    const response = await handler(request);
    const accepted = door.accepted(response);
    if (accepted === undefined) return response;
    if (accepted) guard.throttle.succeeded(name, address);
    else guard.throttle.failed(name, address);
    await guard.auditor?.record(entry(accepted ? "ok" : "refused", accepted ? undefined : "wrong user name or password"), request);
    return response;
  };
}

/** The name of a Basic `Authorization` header, if any. */
function basicName(request: Request): string | undefined {
  return parseBasic(request.headers.get("authorization"))?.username;
}

/** The fields of a form body, read from a clone (the handler still reads the original); `undefined` when it is none. */
async function formOf(request: Request): Promise<URLSearchParams | undefined> {
  if (request.method.toUpperCase() !== "POST" || !(request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return undefined;
  const length = Number(request.headers.get("content-length") ?? "0");
  if (!request.body || length > FORM_LIMIT) return undefined;
  try {
    const text = await request.clone().text();
    return text.length > FORM_LIMIT ? undefined : new URLSearchParams(text);
  } catch {
    return undefined;
  }
}

/** The token service: Basic on GET and POST, or the `password` grant of the OAuth2 POST. 200 accepts, 401 refuses. */
export const tokenDoor: SignInDoor = {
  channel: "token",
  attempt: async (request) => {
    const basic = basicName(request);
    if (basic !== undefined) return basic;
    const form = await formOf(request);
    return form?.get("grant_type") === "password" ? (form.get("username") ?? "") : undefined;
  },
  accepted: (response) => (response.status === 401 ? false : response.status === 200 ? true : undefined),
};

/** The management API: Basic only (a Bearer token is no sign-in). 401 refuses, anything else accepted the credentials. */
export const apiDoor: SignInDoor = {
  channel: "api",
  attempt: async (request) => basicName(request),
  accepted: (response) => response.status !== 401,
};

/** The web page's sign-in form (`POST <prefix>/sign-in`): a 303 with a session accepts, 401 refuses. */
export function uiDoor(prefix: string): SignInDoor {
  return {
    channel: "ui",
    attempt: async (request) => {
      if (new URL(request.url).pathname !== `${prefix}/sign-in`) return undefined;
      const form = await formOf(request);
      return form ? (form.get("username") ?? "") : undefined;
    },
    accepted: (response) => (response.status === 303 ? true : response.status === 401 ? false : undefined),
  };
}
