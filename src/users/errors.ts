/**
 * The one error shape of the management service (Harbor-like):
 *
 *     {"errors":[{"code":"FORBIDDEN","message":"…","field":"email"}]}
 *
 * `field` appears on validation errors only. Messages are fixed phrases and
 * never echo a password, a hash or a salt.
 *
 * @module
 */
import { json } from "../http/response.js";

/** Error codes of the management service, one per HTTP status. */
export type UserErrorCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "INTERNAL_ERROR"
  | "INSUFFICIENT_STORAGE";

/** The HTTP status of each code. */
export const USER_ERROR_STATUS: Record<UserErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL_ERROR: 500,
  /** The user store's storage is full (a driver's `no_space`): the change was not made. */
  INSUFFICIENT_STORAGE: 507,
};

/** One entry of the `errors` array. */
export interface UserErrorEntry {
  /** The error code. */
  code: UserErrorCode;
  /** A human-readable message. */
  message: string;
  /** The request field at fault (validation errors). */
  field?: string;
}

/** Thrown inside the service to answer with an error; turned into a response at the top. */
export class UserApiError extends Error {
  override readonly name = "UserApiError";
  constructor(
    readonly code: UserErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Build the error response for a code. */
export function userErrorResponse(code: UserErrorCode, message: string, options: { field?: string; headers?: HeadersInit } = {}): Response {
  const entry: UserErrorEntry = { code, message, ...(options.field !== undefined && { field: options.field }) };
  return json({ errors: [entry] }, USER_ERROR_STATUS[code], options.headers);
}

/** Shorthands for the errors the routes throw. */
export const fail = {
  badRequest: (message: string, field?: string) => new UserApiError("BAD_REQUEST", message, field),
  unauthorized: () => new UserApiError("UNAUTHORIZED", "authentication required"),
  forbidden: (message = "not allowed") => new UserApiError("FORBIDDEN", message),
  notFound: (message = "no such user") => new UserApiError("NOT_FOUND", message),
  conflict: (message: string, field?: string) => new UserApiError("CONFLICT", message, field),
};
