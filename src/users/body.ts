/**
 * Reading the JSON bodies of the management routes: content type checked,
 * size limited, parsed to an object, and every field checked against the
 * route's allow-list before anything reads it.
 *
 * @module
 */
import { BodyTooLargeError, readLimitedText } from "../http/body.js";
import { UserApiError, fail } from "./errors.js";

/** The default body limit: 16 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024;

/** A parsed JSON object body. */
export type JsonObject = Record<string, unknown>;

/**
 * Read a JSON object body. 415 unless `Content-Type` is `application/json`
 * (or `application/*+json`), 413 above `limit` bytes, 400 for anything that
 * is not one JSON object, and 400 for a field outside `allowed`.
 */
export async function readJsonObject(request: Request, limit: number, allowed: readonly string[]): Promise<JsonObject> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    throw new UserApiError("UNSUPPORTED_MEDIA_TYPE", "the body must be application/json");
  }
  let text: string;
  try {
    text = await readLimitedText(request, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new UserApiError("PAYLOAD_TOO_LARGE", `the body must be at most ${limit} bytes`);
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw fail.badRequest("the body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw fail.badRequest("the body must be a JSON object");
  const body = value as JsonObject;
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw fail.badRequest(`unknown field ${JSON.stringify(field.slice(0, 64))}`, field.slice(0, 64));
  }
  return body;
}

/** Whether a body has a field (own property, any value but `undefined`). */
export function has(body: JsonObject, field: string): boolean {
  return Object.hasOwn(body, field) && body[field] !== undefined;
}
