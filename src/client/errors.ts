/**
 * Errors the client throws, typed by the registry's OCI error code.
 *
 * @module
 */

/** A failed registry or token request. */
export class RegistryClientError extends Error {
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

/**
 * Build an error from a failed response: reads the OCI error body when there is
 * one (`{"errors":[{code,message,detail}]}`), or the token endpoint's
 * `{"error","details"}` shape, else uses the status line.
 */
export async function errorFromResponse(response: Response, what: string): Promise<RegistryClientError> {
  let code = `HTTP_${response.status}`;
  let message = `${what}: HTTP ${response.status}`;
  let detail: unknown;
  try {
    const text = await response.text();
    const body = JSON.parse(text.slice(0, 65536)) as Record<string, unknown>;
    const first = Array.isArray(body.errors) ? (body.errors[0] as Record<string, unknown> | undefined) : undefined;
    if (first && typeof first.code === "string") {
      code = first.code;
      message = `${what}: ${first.code}: ${String(first.message ?? "")}`;
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
