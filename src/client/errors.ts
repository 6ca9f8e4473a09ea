/**
 * Errors the client throws, typed by the registry's OCI error code.
 *
 * @module
 */

/** A failed registry or token request. */
export class RegistryClientError extends Error {
  /** Always `"RegistryClientError"`. */
  override readonly name = "RegistryClientError";
  constructor(
    /** The first OCI error code of the body (`MANIFEST_UNKNOWN`, `DENIED`, …), or a client-side code. */
    readonly code: string,
    message: string,
    /** The HTTP status, or 0 for failures that did not come from the server. */
    readonly status: number,
    /** The `detail` of the first error entry, if any. */
    readonly detail?: unknown,
  ) {
    super(message);
  }
}

/** The OCI code a bodiless error answer stands for. */
const STATUS_CODES: Record<number, string> = { 401: "UNAUTHORIZED", 403: "DENIED", 429: "TOOMANYREQUESTS" };

/**
 * Build an error from a failed response: reads the OCI error body when there is
 * one (`{"errors":[{code,message,detail}]}`), or the token endpoint's
 * `{"error","details"}` shape, else uses the status line.
 */
export async function errorFromResponse(response: Response, what: string): Promise<RegistryClientError> {
  // HEAD answers and some proxies carry no body: fall back on the status and the challenge.
  let code = STATUS_CODES[response.status] ?? `HTTP_${response.status}`;
  const challengeError = /error="?([a-z_]+)"?/.exec(response.headers.get("www-authenticate") ?? "")?.[1];
  let message = `${what}: ${code}${challengeError ? ` (${challengeError})` : ""}`;
  let detail: unknown;
  try {
    const text = await response.text();
    const body = JSON.parse(text.slice(0, 65536)) as Record<string, unknown>;
    const first = Array.isArray(body.errors) ? (body.errors[0] as Record<string, unknown> | undefined) : undefined;
    if (first && typeof first.code === "string") {
      code = first.code;
      message = `${what}: ${first.code}: ${String(first.message ?? "")}${challengeError ? ` (${challengeError})` : ""}`;
      detail = first.detail;
    } else if (typeof body.error === "string") {
      code = body.error.toUpperCase();
      const details = body.details ?? body.error_description;
      message = `${what}: ${body.error}${details ? `: ${String(details)}` : ""}`;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new RegistryClientError(code, message, response.status, detail);
}

/**
 * Drop a response body we do not read, without waiting: a cancel need not
 * settle before the connection can be reused, and some fetch interceptors
 * never settle it.
 */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => {});
}
