/**
 * Health checks over HTTP, as Distribution serves them: the status handler
 * of `/debug/health` (200 `{}`, or 503 with the failing checks by name), the
 * gate that answers every request of the API with 503 `UNAVAILABLE` while a
 * check fails (the storage check of `health.storagedriver` is storage-level:
 * stores/base/health-check.ts).
 *
 * @module
 */
import { errorResponse } from "../oci/errors.js";
import { onlyReadsRequestBasics, readsRequestBasics } from "../runtime/adapter-capabilities.js";
import type { HealthChecks } from "../util/health.js";

const JSON_TYPE = { "content-type": "application/json" };

/**
 * The `/debug/health` handler: GET (and HEAD) answer 200 with `{}` when every
 * check passes, 503 with `{"<check>":"<last error>",…}` when some fail; other
 * methods get 404, as in Distribution. It does not look at the path.
 */
export function healthStatusHandler(checks: HealthChecks): (request: Request) => Promise<Response> {
  return readsRequestBasics(async (request: Request): Promise<Response> => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("404 page not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    const failing = checks.failing();
    const body = JSON.stringify(failing);
    const status = Object.keys(failing).length > 0 ? 503 : 200;
    return new Response(request.method === "HEAD" ? null : body, { status, headers: { ...JSON_TYPE, "content-length": String(new TextEncoder().encode(body).length) } });
  });
}

/**
 * Wrap `handler` so that, while any of `checks` fails, every request gets 503
 * with the OCI error body `{"errors":[{"code":"UNAVAILABLE","message":"service
 * unavailable","detail":"health check failed: please see /debug/health"}]}`
 * (Distribution's answer) instead of reaching it. Healthy, it costs one
 * property read per request.
 */
export function healthGate(handler: (request: Request) => Promise<Response>, checks: HealthChecks): (request: Request) => Promise<Response> {
  const gated = (request: Request): Promise<Response> => {
    if (checks.healthy) return handler(request);
    const response = errorResponse("UNAVAILABLE", "service unavailable", { detail: "health check failed: please see /debug/health", request });
    return Promise.resolve(request.method === "HEAD" ? new Response(null, { status: response.status, headers: response.headers }) : response);
  };
  return onlyReadsRequestBasics(handler) ? readsRequestBasics(gated) : gated;
}
