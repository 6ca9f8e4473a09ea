/**
 * The event vocabulary every service shares: what happened (`action`), to what
 * (`target`), in which request, by whom, on which instance. The fields that
 * Distribution's notification envelope carries keep its names and meaning, so
 * a receiver written for Distribution reads registry-kit's events unchanged.
 *
 * @module
 */

/** The envelope media type of a webhook POST (Distribution 2.x). */
export const EVENTS_MEDIA_TYPE = "application/vnd.docker.distribution.events.v1+json";

/** Actions Distribution sends to its notification endpoints. */
export const DISTRIBUTION_ACTIONS = ["push", "pull", "mount", "delete"] as const;

/**
 * What happened.
 *
 * - `push`, `pull`, `mount`, `delete`: as in Distribution. A blob `push` is an
 *   upload completed; a `delete` with `target.tag` and no digest is a tag delete.
 * - `upload.started`, `upload.cancelled`: a blob upload session opened or cancelled.
 * - `repository.created`: the first manifest or blob landed in a repository.
 * - `repository.emptied`: a repository left the catalog: its last manifest was
 *   deleted (DELETE by digest, or garbage collection), or the whole repository
 *   was deleted (`deleteRepository`, with its counts in `target.report`).
 * - `token.issued`, `token.refused`: the token service answered a request.
 * - `user.created`, `user.updated`, `user.deleted`, `user.password_changed`,
 *   `user.admin_changed`: the users API changed an account.
 * - `gc.completed`: a garbage collection run finished.
 * - `audit`: a record was appended to the audit log (docs/audit.md); its
 *   `target.audit` says which. Endpoints receive it too (drop it with
 *   `ignore.actions: [audit]`).
 */
export type EventAction =
  | (typeof DISTRIBUTION_ACTIONS)[number]
  | "upload.started"
  | "upload.cancelled"
  | "repository.created"
  | "repository.emptied"
  | "token.issued"
  | "token.refused"
  | "user.created"
  | "user.updated"
  | "user.deleted"
  | "user.password_changed"
  | "user.admin_changed"
  | "gc.completed"
  | "audit";

/** A content descriptor, as in the OCI image spec. */
export interface EventDescriptor {
  /** Media type of the referenced content. */
  mediaType?: string;
  /** Its digest. */
  digest: string;
  /** Its size in bytes. */
  size?: number;
}

/** What an event is about; the fields that apply are set. */
export interface EventTarget {
  /** Media type of the manifest or blob (`application/octet-stream` for blobs). */
  mediaType?: string;
  /** Digest of the manifest or blob. */
  digest?: string;
  /** Size in bytes. */
  size?: number;
  /** Same as `size` (Distribution sends both). */
  length?: number;
  /** The repository. */
  repository?: string;
  /** The repository a mounted blob came from. */
  fromRepository?: string;
  /** Where the manifest or blob can be fetched (`/v2/<name>/manifests/<digest>` or `/blobs/<digest>`, absolute). */
  url?: string;
  /** The tag, for a manifest pushed, pulled or deleted by tag. */
  tag?: string;
  /** What a pushed manifest references (layers, config, child manifests); sent to endpoints only with `includereferences`. */
  references?: EventDescriptor[];
  /** The upload session of an `upload.*` event. */
  uploadId?: string;
  /** The account of a `user.*` or `token.*` event (the user name). */
  user?: string;
  /** The scopes asked for (`token.*`). */
  scope?: string;
  /** What a `gc.completed` run or a repository delete (`repository.emptied`) did (counts). */
  report?: Record<string, number | boolean>;
  /** The record of an `audit` event: its place in the log and the hashes that chain it (an external copy of the chain). */
  audit?: AuditEventRecord;
}

/** What an `audit` event carries of its record (the whole record is in the log, docs/audit.md). */
export interface AuditEventRecord {
  /** The record's sequence number. */
  seq: number;
  /** SHA-256 (hex) of the record's stored bytes. */
  hash: string;
  /** SHA-256 (hex) of the record before it. */
  prev: string;
  /** The record's action (`signin`, `push`, `user.created`, …). */
  action: string;
  /** `ok`, `refused`, `locked` or `error`. */
  result: string;
  /** The record's project, when it has one. */
  project?: string;
}

/** The request that caused an event. */
export interface EventRequest {
  /** The request id: its `X-Request-Id` header when it has one, else a fresh one. */
  id: string;
  /** The client address, from `X-Forwarded-For` (first entry) or `X-Real-IP` when a proxy set one. */
  addr?: string;
  /** The `Host` the request was sent to. */
  host?: string;
  /** The HTTP method. */
  method: string;
  /** The client's `User-Agent`. */
  useragent: string;
}

/** Who caused an event: the authenticated user, when there is one. */
export interface EventActor {
  /** The user name (the token's `sub`). */
  name?: string;
}

/** Which registry instance produced an event. */
export interface EventSource {
  /** The instance's address (`host:port`), when configured. */
  addr?: string;
  /** A random id of this process, fixed for its lifetime. */
  instanceID?: string;
}

/** One event, shaped like an event of Distribution's envelope. */
export interface RegistryEvent {
  /** A unique id, a UUID (version 8: a random prefix per process, then a counter): receivers drop duplicates by it (delivery is at least once). */
  id: string;
  /** When it happened (RFC 3339). */
  timestamp: string;
  /** What happened. */
  action: EventAction;
  /** What it happened to. */
  target: EventTarget;
  /** The request that caused it; absent for events no request caused (`gc.completed`). */
  request?: EventRequest;
  /** Who caused it. */
  actor: EventActor;
  /** Which instance produced it. */
  source: EventSource;
}

/** Whether `action` is one Distribution sends to endpoints. */
export function isDistributionAction(action: string): boolean {
  return (DISTRIBUTION_ACTIONS as readonly string[]).includes(action);
}
