/**
 * The `request` record of an event, read from a fetch `Request`.
 *
 * @module
 */
import type { EventRequest } from "./model.js";

/** Longest header value copied into an event (a hostile client could send huge ones). */
const MAX_FIELD = 512;

function clip(value: string | null): string | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed.slice(0, MAX_FIELD);
}

/** The request record of `request`: id, client address (behind a proxy), host, method, user agent. */
export function requestRecord(request: Request): EventRequest {
  const headers = request.headers;
  let host = clip(headers.get("host"));
  if (host === undefined) {
    try {
      host = new URL(request.url).host;
    } catch {
      // keep it absent
    }
  }
  const forwarded = clip(headers.get("x-forwarded-for"))?.split(",")[0]?.trim();
  const record: EventRequest = {
    id: clip(headers.get("x-request-id")) ?? crypto.randomUUID(),
    method: request.method.toUpperCase(),
    useragent: clip(headers.get("user-agent")) ?? "",
  };
  const addr = forwarded || clip(headers.get("x-real-ip"));
  if (addr) record.addr = addr;
  if (host) record.host = host;
  return record;
}
