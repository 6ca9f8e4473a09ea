/**
 * One line per request in the Common Log Format:
 * `host ident user [time] "request line" status bytes`.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `10/Oct/2000:13:55:36 +0000` (always UTC). */
export function clfTime(date: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${p(date.getUTCHours())}:${p(date.getUTCMinutes())}:${p(date.getUTCSeconds())} +0000`;
}

/** The fields of one access-log line. */
export interface AccessRecord {
  remote: string;
  user?: string;
  time: Date;
  method: string;
  target: string;
  httpVersion: string;
  /** Status sent, or 0 when the client left before a response. */
  status: number;
  /** Body bytes sent, when known. */
  bytes?: number;
}

/** Format a record as a Common Log Format line (no newline). Quotes and controls in the request line are escaped. */
export function formatAccessLine(r: AccessRecord): string {
  const request = `${r.method} ${r.target} HTTP/${r.httpVersion}`.replace(/[\x00-\x1f\x7f"\\]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  const user = r.user ? r.user.replace(/[\s\x00-\x1f\x7f"]/g, "?") : "-";
  return `${r.remote} - ${user} [${clfTime(r.time)}] "${request}" ${r.status || "-"} ${r.bytes ?? "-"}`;
}

/** The user name of `Authorization: Basic` (unverified, as in Apache's `%u`), if any. */
export function basicUser(authorization: string | undefined): string | undefined {
  if (!authorization || !/^basic /i.test(authorization)) return undefined;
  const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon > 0 ? decoded.slice(0, colon) : undefined;
}

/** A server that emits `request` and `checkContinue` (node:http, node:https, or node:http2's compatibility API). */
export interface RequestEmitter {
  prependListener(event: "request" | "checkContinue", listener: (req: IncomingMessage, res: ServerResponse) => void): unknown;
}

/** Write one line per finished (or abandoned) request on `server` to `write`. */
export function attachAccessLog(server: RequestEmitter, write: (line: string) => void): void {
  const track = (req: IncomingMessage, res: ServerResponse): void => {
    const time = new Date();
    const socket = req.socket;
    const bytes = countBodyBytes(res);
    res.once("close", () => {
      write(formatAccessLine({
        remote: socket.remoteAddress ?? "-",
        user: basicUser(req.headers.authorization),
        time,
        method: req.method ?? "-",
        target: req.url ?? "-",
        httpVersion: req.httpVersion,
        status: res.headersSent ? res.statusCode : 0,
        bytes: req.method === "HEAD" ? 0 : bytes(),
      }));
    });
  };
  // Prepended, so the byte counter is in place before the adapter writes anything.
  server.prependListener("request", track);
  server.prependListener("checkContinue", track);
}

/** Count the body bytes written to `res` (what `%b` reports), by wrapping its write and end. */
function countBodyBytes(res: ServerResponse): () => number {
  let count = 0;
  const add = (chunk: unknown): void => {
    if (typeof chunk === "string") count += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) count += chunk.byteLength;
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => (add(chunk), write(chunk, ...rest))) as ServerResponse["write"];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== "function") add(chunk);
    return end(chunk, ...rest);
  }) as ServerResponse["end"];
  return () => count;
}
