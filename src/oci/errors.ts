/**
 * The OCI error body `{"errors":[{"code","message","detail"}]}` and the
 * standard codes with their HTTP statuses (docs/architecture.md rule 7). Every registry
 * error response is built here, the token challenge's 401 (`auth/verifier/challenge.ts`)
 * included.
 *
 * @module
 */
import { inMemoryResponse } from "../runtime/adapter-capabilities.js";
import { baseHeaderList, initPairs } from "./wire.js";

const encoder = new TextEncoder();

/** Error codes of the OCI distribution-spec (plus Distribution's extras). */
export type ErrorCode =
  | "BLOB_UNKNOWN"
  | "BLOB_UPLOAD_INVALID"
  | "BLOB_UPLOAD_UNKNOWN"
  | "DIGEST_INVALID"
  | "MANIFEST_BLOB_UNKNOWN"
  | "MANIFEST_INVALID"
  | "MANIFEST_UNKNOWN"
  | "NAME_INVALID"
  | "NAME_UNKNOWN"
  | "SIZE_INVALID"
  | "UNAUTHORIZED"
  | "DENIED"
  | "UNSUPPORTED"
  | "TOOMANYREQUESTS"
  | "PAGINATION_NUMBER_INVALID"
  | "RANGE_INVALID"
  | "TAG_INVALID"
  | "UNAVAILABLE"
  | "UNKNOWN";

/** The default HTTP status of each code. */
export const ERROR_STATUS: Record<ErrorCode, number> = {
  BLOB_UNKNOWN: 404,
  BLOB_UPLOAD_INVALID: 400,
  BLOB_UPLOAD_UNKNOWN: 404,
  DIGEST_INVALID: 400,
  MANIFEST_BLOB_UNKNOWN: 400,
  MANIFEST_INVALID: 400,
  MANIFEST_UNKNOWN: 404,
  NAME_INVALID: 400,
  NAME_UNKNOWN: 404,
  SIZE_INVALID: 400,
  UNAUTHORIZED: 401,
  DENIED: 403,
  UNSUPPORTED: 415,
  TOOMANYREQUESTS: 429,
  PAGINATION_NUMBER_INVALID: 400,
  RANGE_INVALID: 416,
  /** Distribution's code for a malformed tag. */
  TAG_INVALID: 400,
  /** Distribution's code for a registry whose health checks fail. */
  UNAVAILABLE: 503,
  /** Distribution's code for an unexpected server failure. */
  UNKNOWN: 500,
};

/**
 * The answer when the storage has no room (`StorageError` code `no_space`):
 * 507 Insufficient Storage (RFC 4918 §11.5: the server cannot store what the
 * request needs), with code `UNKNOWN`.
 *
 * Why `UNKNOWN` and not a new code: the distribution-spec has no code for a
 * full server, and clients switch on the codes they know; Distribution itself
 * answers a full disk with `UNKNOWN` (at 500, with the driver's error, path
 * included, as detail). Keeping its code changes only the status, which every
 * client already treats as a server-side 5xx, while the status and message now
 * say what happened. `UNAVAILABLE` (Distribution's 503) would invite automatic
 * retries of a push that cannot succeed until someone frees space.
 *
 * The message is fixed: nothing of the driver's error (paths, bucket names)
 * reaches the client; the `error` log event carries it.
 */
export function storageFull(): RegistryError {
  return new RegistryError("UNKNOWN", "the registry's storage is full: nothing was stored; try again once space has been freed", 507);
}

/** One entry of the `errors` array. */
export interface RegistryErrorEntry {
  code: ErrorCode;
  message: string;
  detail?: unknown;
}

/** Build an OCI error response. `status` defaults to the code's standard status. */
export function errorResponse(
  code: ErrorCode,
  message: string,
  options: { status?: number; detail?: unknown; headers?: HeadersInit; request?: Request } = {},
): Response {
  return errorsResponse([{ code, message, detail: options.detail ?? null }], options.status ?? ERROR_STATUS[code], options.headers, options.request);
}

/**
 * Build a response carrying several error entries. Given the `request` it
 * answers, the response can take its adapter's in-memory fast lane.
 */
export function errorsResponse(errors: RegistryErrorEntry[], status: number, headersInit?: HeadersInit, request?: Request): Response {
  const bytes = errorBody(errors);
  return inMemoryResponse(request, bytes, { status, headers: errorHeaders(headersInit, bytes.byteLength) });
}

/** The OCI error body `{"errors":[{code, message, detail}]}` of `errors` (a missing detail is null), as UTF-8. */
export function errorBody(errors: readonly RegistryErrorEntry[]): Uint8Array {
  return encoder.encode(JSON.stringify({ errors: errors.map((e) => ({ code: e.code, message: e.message, detail: e.detail ?? null })) }));
}

const JSON_TYPE = "application/json; charset=utf-8";
/** Headers an error response sets itself; the same names among the extra headers are dropped. */
const OWN_HEADERS = new Set(["content-type", "content-length", ...baseHeaderList.map(([name]) => name.toLowerCase())]);

/**
 * The headers of an error response of `length` bytes: those every registry
 * response carries, the extra ones given, the JSON content type and the length.
 * Name/value pairs, not a `Headers`: a refused request (the 401 challenge)
 * answers with one of these, and making and reading back a `Headers` would
 * cost more than the rest of the answer.
 */
export function errorHeaders(init: HeadersInit | undefined, length: number): [string, string][] {
  const pairs: [string, string][] = [...baseHeaderList];
  if (init !== undefined) {
    for (const [name, value] of initPairs(init)) if (!OWN_HEADERS.has(name.toLowerCase())) pairs.push([name, value]);
  }
  pairs.push(["Content-Type", JSON_TYPE], ["Content-Length", String(length)]);
  return pairs;
}

/**
 * An error a handler can throw; the router turns it into {@link errorResponse}.
 * Use it for expected, client-caused failures only.
 */
export class RegistryError extends Error {
  /** Always `"RegistryError"`. */
  override readonly name = "RegistryError";
  constructor(
    /** The OCI error code sent in the body. */
    readonly code: ErrorCode,
    message: string,
    /** The HTTP status. Default: the code's standard status. */
    readonly status: number = ERROR_STATUS[code],
    /** The entry's `detail` (`null` when absent). */
    readonly detail?: unknown,
    /** Extra response headers, e.g. `Allow` or `Range`. */
    readonly headers?: HeadersInit,
  ) {
    super(message);
  }

  /** The response for this error (to `request`, when given: see `errorsResponse`). */
  toResponse(request?: Request): Response {
    return errorResponse(this.code, this.message, { status: this.status, detail: this.detail, headers: this.headers, request });
  }
}
