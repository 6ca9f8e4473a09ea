/**
 * One audit record: who did what, from where, with which result, and the
 * SHA-256 of the record before it (the hash chain). A record is stored as the
 * exact bytes {@link encodeRecord} gives, and its hash is the hash of those
 * bytes, so changing any field of a stored record breaks the chain at the
 * next one.
 *
 * @module
 */
import { toHex, utf8 } from "../util/bytes.js";

/**
 * Who acted. `kind` says which sort of principal `name` is, so robots and
 * OIDC subjects (issue 45, later parts) fit without a new format: an OIDC
 * subject also names its `issuer`. `anonymous` has no name.
 */
export interface AuditWho {
  /** The sort of principal. */
  kind: "user" | "robot" | "oidc" | "anonymous";
  /** Its name (user name, robot name, OIDC `sub`); for a refused sign-in, the name that was tried. */
  name?: string;
  /** The issuer of an OIDC subject. */
  issuer?: string;
}

/** Where a request came from. */
export interface AuditFrom {
  /** The client address: the socket's peer, or the proxy's `X-Forwarded-For` entry when the server trusts its proxy. */
  addr?: string;
  /** Which door: `ui` (the web page), `token` (the token service), `api` (the management API), `registry` (`/v2/`), `cli`. */
  channel?: string;
  /** The request id, as in the events. */
  requestId?: string;
}

/** What a caller hands to the log; it adds `seq`, `time` and `prev`. */
export interface AuditEntry {
  /** What happened: `signin`, `token.issued`, `token.refused`, `push`, `delete`, `user.created`, `quota.changed`, … */
  action: string;
  /** Who acted. */
  who: AuditWho;
  /** Where from. */
  from?: AuditFrom;
  /** `ok`, `refused` (wrong credentials, denied), `locked` (throttled) or `error`. */
  result: "ok" | "refused" | "locked" | "error";
  /** What it was done to: repository, tag, digest, user, scope, … (strings or numbers only). */
  target?: Record<string, string | number>;
  /** The project (today: the first path segment of the repository), for `audit list --project`. */
  project?: string;
  /** A short human-readable reason. */
  detail?: string;
}

/** A stored record. */
export interface AuditRecord extends AuditEntry {
  /** Position in the log, from 1, without gaps. */
  seq: number;
  /** When it was appended (RFC 3339, UTC). */
  time: string;
  /** SHA-256 (hex) of the stored bytes of record `seq - 1`; {@link GENESIS} for the first. */
  prev: string;
}

/** The `prev` of record 1. */
export const GENESIS = "0".repeat(64);

/** The longest value kept in a text field: a record stays small whatever a client sends. */
const MAX_TEXT = 512;

/** The stored bytes of `record`: JSON with a fixed field order, one line. */
export function encodeRecord(record: AuditRecord): Uint8Array {
  const ordered: Record<string, unknown> = { seq: record.seq, time: record.time, prev: record.prev, action: clip(record.action), who: cleanWho(record.who) };
  if (record.from) ordered.from = cleanStrings(record.from as Record<string, string | undefined>);
  ordered.result = record.result;
  if (record.target) ordered.target = cleanStrings(record.target);
  if (record.project !== undefined) ordered.project = clip(record.project);
  if (record.detail !== undefined) ordered.detail = clip(record.detail);
  return utf8(`${JSON.stringify(ordered)}\n`);
}

/** The record held by `bytes`, or `undefined` when they are not one. */
export function decodeRecord(bytes: Uint8Array): AuditRecord | undefined {
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as AuditRecord;
    const ok = typeof value === "object" && value !== null && Number.isSafeInteger(value.seq) && typeof value.prev === "string" &&
      typeof value.time === "string" && typeof value.action === "string" && typeof value.who === "object" && value.who !== null;
    return ok ? value : undefined;
  } catch {
    return undefined;
  }
}

/** SHA-256 (hex) of a record's stored bytes: the next record's `prev`. */
export async function hashOf(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)));
}

/** The project of a repository name: its first path segment (`team/app` → `team`). */
export function projectOf(repository: string | undefined): string | undefined {
  if (!repository) return undefined;
  const slash = repository.indexOf("/");
  return slash < 0 ? repository : repository.slice(0, slash);
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

function cleanWho(who: AuditWho): AuditWho {
  const out: AuditWho = { kind: who.kind };
  if (who.name !== undefined) out.name = clip(who.name);
  if (who.issuer !== undefined) out.issuer = clip(who.issuer);
  return out;
}

function cleanStrings<T extends Record<string, string | number | undefined>>(fields: T): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const key of Object.keys(fields).sort()) {
    const value = fields[key];
    if (typeof value === "string") out[key] = clip(value);
    else if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  }
  return out;
}
