/**
 * The auditor: appends records to the audit log and sends each one out
 * through the events notifier as an `audit` event, and turns the events the
 * services already emit (push, delete, tokens, account changes) into records.
 *
 * @module
 */
import { AWAITED, eventEmitter, RECORD_PARTS, RECORDED, type EventHook, type EventParts, type PartsSink } from "../events/hook.js";
import type { RegistryEvent } from "../events/model.js";
import type { LogHook } from "../http/log.js";
import type { AuditLog } from "./log.js";
import { projectOf, type AuditEntry } from "./record.js";

/** Options of {@link createAuditor}. */
export interface AuditorOptions {
  /** Where records are appended. */
  log: AuditLog;
  /** Where each record also goes as an `audit` event (the notifier). */
  onEvent?: EventHook;
  /** Where a failed append is reported. */
  logHook: LogHook;
  /** The client address of a request (see `clientAddress` in src/http/client-address.ts). */
  addressOf: (request: Request) => string | undefined;
}

/** Records audit entries; never throws into the request that caused one. */
export interface Auditor {
  /** Append `entry` (with the address of `request`, when given); resolves once it is stored or its failure logged. */
  record(entry: AuditEntry, request?: Request): Promise<void>;
  /** A sink for the services' `onEvent`: the events worth auditing become records, before the client is answered. */
  sink: PartsSink;
}

/** The auditor over `options.log`. */
export function createAuditor(options: AuditorOptions): Auditor {
  const emit = eventEmitter({ ...(options.onEvent ? { onEvent: options.onEvent } : {}), log: options.logHook });
  const record = async (entry: AuditEntry, request?: Request): Promise<void> => {
    const addr = request && options.addressOf(request);
    const full: AuditEntry = addr ? { ...entry, from: { ...entry.from, addr } } : entry;
    try {
      const stored = await options.log.append(full);
      const audit = { seq: stored.seq, hash: stored.hash, prev: stored.prev, action: stored.action, result: stored.result, ...(stored.project ? { project: stored.project } : {}) };
      await emit(request, { action: "audit", target: { audit, ...(stored.target?.repository ? { repository: String(stored.target.repository) } : {}) }, ...(stored.who.name ? { actor: stored.who.name } : {}) });
    } catch (error) {
      options.logHook({ level: "error", msg: "audit record not stored", action: entry.action, error: error instanceof Error ? error.message : String(error) });
    }
  };
  const fromParts = (parts: EventParts, request: Request | undefined): Promise<void> => {
    const entry = entryOfEvent(parts);
    // RECORDED, the settled promise the emitter recognises: a pull is answered without waiting a turn for this sink.
    return entry ? record(entry, request) : RECORDED;
  };
  const sink: PartsSink & { [AWAITED]: true } = {
    [AWAITED]: true,
    [RECORD_PARTS]: (parts, _source, request) => fromParts(parts, request),
    // Called instead of the above when a service also has plain listeners: no request, so no address.
    record: (event: RegistryEvent) => fromParts({ action: event.action, target: event.target, ...(event.actor.name ? { actor: event.actor.name } : {}) }, undefined),
  };
  return { record, sink };
}

/** Actions recorded, and the channel they come through. Pulls, uploads in progress and the like are not audited. */
const AUDITED: Record<string, string> = {
  push: "registry", mount: "registry", delete: "registry", "repository.emptied": "registry",
  "token.issued": "token", "token.refused": "token",
  "user.created": "api", "user.updated": "api", "user.deleted": "api", "user.password_changed": "api", "user.admin_changed": "api",
  "gc.completed": "registry",
};

/** The record of an event a service emitted, or `undefined` when it is not audited. */
export function entryOfEvent(parts: EventParts): AuditEntry | undefined {
  const channel = AUDITED[parts.action];
  if (channel === undefined) return undefined;
  const t = parts.target;
  const target: Record<string, string | number> = {};
  for (const field of ["repository", "tag", "digest", "mediaType", "fromRepository", "user", "scope"] as const) {
    const value = t[field];
    if (typeof value === "string") target[field] = value;
  }
  for (const [key, value] of Object.entries(t.report ?? {})) if (typeof value === "number") target[key] = value;
  const project = projectOf(t.repository);
  return {
    action: parts.action,
    who: parts.actor ? { kind: "user", name: parts.actor } : { kind: "anonymous" },
    from: { channel },
    result: parts.action === "token.refused" ? "refused" : "ok",
    ...(Object.keys(target).length > 0 ? { target } : {}),
    ...(project ? { project } : {}),
  };
}
