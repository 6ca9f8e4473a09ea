/**
 * Error bodies in the shapes OpenStack clients parse.
 *
 * - Identity (keystone) and the token check in front of compute and image
 *   (keystonemiddleware): `{"error":{"code":401,"title":"Unauthorized","message":"…"}}`.
 * - Compute (nova): `{"<fault>":{"code":403,"message":"…"}}` where the key
 *   names the fault (`badRequest`, `forbidden`, `itemNotFound`, …).
 * - Image (glance) answers plain errors; the example uses the keystone shape.
 *
 * Messages are fixed phrases or echo only what the caller sent; they never
 * carry secrets or internal details, which go to the log hook instead.
 *
 * @module
 */
import { json } from "./http.js";

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  413: "Request Entity Too Large",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
};

/** The standard message of a 401 from keystone and keystonemiddleware. */
export const AUTH_REQUIRED = "The request you have made requires authentication.";

/** A keystone-shaped error response. */
export function keystoneError(status: number, message: string, headers?: HeadersInit): Response {
  return json({ error: { code: status, title: TITLES[status] ?? "Error", message } }, status, headers);
}

const NOVA_FAULTS: Record<number, string> = {
  400: "badRequest",
  401: "unauthorized",
  403: "forbidden",
  404: "itemNotFound",
  405: "HTTPMethodNotAllowed",
  406: "HTTPNotAcceptable",
  500: "computeFault",
};

/** A nova-shaped error response, `{"<fault>":{"code","message"}}`. */
export function novaError(status: number, message: string, headers?: HeadersInit): Response {
  return json({ [NOVA_FAULTS[status] ?? "computeFault"]: { code: status, message } }, status, headers);
}

/**
 * Thrown by the compute routes; the service turns it into
 * {@link novaError}`(status, message)` with the microversion headers.
 */
export class ComputeError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
