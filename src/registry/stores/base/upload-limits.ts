/**
 * Limits on open upload sessions, so that one account cannot fill the disk:
 * how many sessions a caller and a repository may hold open, and how many bytes
 * those sessions may hold together. Sessions nobody wrote to for the idle time
 * are abandoned: they are removed when a limit is reached, when they are
 * touched, and by {@link removeAbandonedUploads} (run periodically by the
 * all-in-one server, also after a crash left uploads behind).
 *
 * Counting reads storage (stateless handlers): a repository's sessions are
 * listed under `_uploads/`, a caller's under the index
 * `uploads/callers/<sha256 of caller, or "anonymous">/` (see layout.ts), which
 * also lets the sweep find every session without walking all repositories. Requests racing in
 * several processes can overshoot a count limit by the number of racing
 * requests; within one process the check and the creation of a session are
 * serialized per caller and repository.
 *
 * @module
 */
import type { StorageDriver } from "../../../storage/driver.js";
import type { LogHook } from "../../../http/log.js";
import type { RegistryLimits } from "../../options.js";
import { RegistryError } from "../../../oci/errors.js";
import { createHasher } from "../../../oci/hash.js";
import { UPLOADS_INDEX, callerUpload, callerUploadsPrefix, parseKey, uploadData, uploadDir, uploadsPrefix } from "./layout.js";

/** Resolved limits (see `RegistryLimits` for the options and defaults). */
export interface UploadLimits {
  sessionsPerCaller: number;
  sessionsPerRepository: number;
  bytesPerCaller: number;
  bytesPerRepository: number;
  /** A session with no byte written for this long is abandoned. */
  idleMs: number;
}

/** The limits of `RegistryLimits` with their defaults; `TypeError` for a value that is not a whole number or `Infinity`. */
export function resolveUploadLimits(limits: RegistryLimits | undefined): UploadLimits {
  const count = (value: number | undefined, fallback: number, what: string): number => {
    const n = value ?? fallback;
    if (!(n === Infinity || (Number.isSafeInteger(n) && n >= 0))) throw new TypeError(`limits.${what} must be a whole number or Infinity`);
    return n;
  };
  return {
    sessionsPerCaller: count(limits?.uploadsPerCaller, 128, "uploadsPerCaller"),
    sessionsPerRepository: count(limits?.uploadsPerRepository, 256, "uploadsPerRepository"),
    bytesPerCaller: count(limits?.uploadBytesPerCaller, 64 * 1024 ** 3, "uploadBytesPerCaller"),
    bytesPerRepository: count(limits?.uploadBytesPerRepository, Infinity, "uploadBytesPerRepository"),
    idleMs: count(limits?.uploadIdleSeconds, 3600, "uploadIdleSeconds") * 1000,
  };
}

/** One open session, as found in storage. */
interface OpenSession {
  name: string;
  uuid: string;
  size: number;
  modified: number;
}

/** The index key of a caller: SHA-256 hex of its name (names may hold any character). */
export function callerKey(caller: string): string {
  const hasher = createHasher("sha256");
  hasher.update(new TextEncoder().encode(caller));
  return hasher.digest().slice("sha256:".length);
}

const serial = new Map<string, Promise<unknown>>();

/** Run `task` after earlier tasks with the same `key` in this process (check-then-create without overshoot). */
export async function serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = serial.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const settled = run.then(() => {}, () => {});
  serial.set(key, settled);
  try {
    return await run;
  } finally {
    if (serial.get(key) === settled) serial.delete(key);
  }
}

/** A session known by its ids only: counting needs no more. */
interface SessionId {
  name: string | undefined;
  uuid: string;
  /** Its caller index entry, when listed from the index. */
  indexKey?: string;
}

/** The sessions of repository `name` (listing only). */
async function repositorySessionIds(storage: StorageDriver, name: string): Promise<SessionId[]> {
  const ids: SessionId[] = [];
  for await (const key of eachKey(storage, uploadsPrefix(name), undefined)) {
    const parsed = parseKey(key);
    if (parsed.kind === "uploadData") ids.push({ name, uuid: parsed.uuid });
  }
  return ids;
}

/** The sessions of a caller, from the index (listing only; the repository is read when resolved). */
async function callerSessionIds(storage: StorageDriver, owner: string): Promise<SessionId[]> {
  const ids: SessionId[] = [];
  for await (const key of eachKey(storage, callerUploadsPrefix(owner), undefined)) {
    const parsed = parseKey(key);
    if (parsed.kind === "callerUpload") ids.push({ name: undefined, uuid: parsed.uuid, indexKey: key });
  }
  return ids;
}

/** Size and last write of each session that still exists; index entries of ended ones are removed. */
async function resolve(storage: StorageDriver, ids: SessionId[]): Promise<OpenSession[]> {
  const sessions: OpenSession[] = [];
  for (const id of ids) {
    const name = id.name ?? (id.indexKey === undefined ? undefined : await readText(storage, id.indexKey));
    const session = name === undefined ? undefined : await openSession(storage, name, id.uuid);
    if (session) sessions.push(session);
    else if (id.indexKey !== undefined) await storage.delete(id.indexKey);
  }
  return sessions;
}

/** A session's size and last write, or undefined when it is gone. */
async function openSession(storage: StorageDriver, name: string, uuid: string): Promise<OpenSession | undefined> {
  const info = await storage.stat(uploadData(name, uuid)).catch(() => undefined);
  if (!info) return undefined;
  return { name, uuid, size: info.size, modified: info.modified.getTime() };
}

/**
 * Remove the abandoned sessions among `sessions` (no byte written for the idle
 * time, by the storage's clock, as the sweep and GC judge it) and return the
 * rest. Only called once a limit is reached, so a clock that disagrees with the
 * storage's can never remove sessions that are within the limits.
 */
async function withoutAbandoned(storage: StorageDriver, sessions: OpenSession[], limits: UploadLimits): Promise<OpenSession[]> {
  const now = Date.now();
  const kept: OpenSession[] = [];
  for (const session of sessions) {
    if (now - session.modified > limits.idleMs) await storage.deletePrefix(uploadDir(session.name, session.uuid));
    else kept.push(session);
  }
  return kept;
}

async function readText(storage: StorageDriver, key: string): Promise<string | undefined> {
  const stream = await storage.read(key).catch(() => undefined);
  if (!stream) return undefined;
  return new Response(stream).text();
}

/**
 * Refuse a new session in `name` for `owner` (a caller key, or undefined for
 * an anonymous caller, who is limited per repository only) when a count limit
 * is reached: 429 `TOOMANYREQUESTS`, saying which limit.
 */
export async function checkNewSession(storage: StorageDriver, limits: UploadLimits, name: string, owner: string | undefined): Promise<void> {
  // Counting lists keys only; sessions are looked at one by one only at the limit.
  const under = async (limit: number, ids: SessionId[]): Promise<number | undefined> => {
    if (ids.length < limit) return undefined;
    const open = await withoutAbandoned(storage, await resolve(storage, ids), limits);
    return open.length >= limit ? open.length : undefined;
  };
  if (Number.isFinite(limits.sessionsPerRepository)) {
    const over = await under(limits.sessionsPerRepository, await repositorySessionIds(storage, name));
    if (over !== undefined) throw tooMany(`repository ${name} has ${over} open uploads, the most allowed`, limits);
  }
  if (owner !== undefined && Number.isFinite(limits.sessionsPerCaller)) {
    const over = await under(limits.sessionsPerCaller, await callerSessionIds(storage, owner));
    if (over !== undefined) throw tooMany(`you have ${over} open uploads, the most allowed`, limits);
  }
}

function tooMany(what: string, limits: UploadLimits): RegistryError {
  const idle = Math.round(limits.idleMs / 60_000);
  return new RegistryError("TOOMANYREQUESTS", `upload limit: ${what}; finish or cancel one (unused uploads expire after ${idle} min)`, 429);
}

/**
 * How many more bytes upload `uuid` (now `size` bytes) may take, given what
 * the other open sessions of the caller and of the repository hold. Infinity
 * when no byte limit is set.
 */
export async function byteAllowance(storage: StorageDriver, limits: UploadLimits, name: string, uuid: string, owner: string | undefined, size: number): Promise<number> {
  const left = async (limit: number, list: () => Promise<OpenSession[]>): Promise<number> => {
    const others = (sessions: OpenSession[]) => sessions.reduce((sum, s) => (s.uuid === uuid ? sum : sum + s.size), 0);
    let open = await list();
    if (others(open) + size >= limit) open = await withoutAbandoned(storage, open, limits);
    return limit - others(open) - size;
  };
  let allowance = Infinity;
  if (Number.isFinite(limits.bytesPerRepository)) allowance = await left(limits.bytesPerRepository, async () => resolve(storage, await repositorySessionIds(storage, name)));
  if (owner !== undefined && Number.isFinite(limits.bytesPerCaller)) {
    allowance = Math.min(allowance, await left(limits.bytesPerCaller, async () => resolve(storage, await callerSessionIds(storage, owner))));
  }
  return Math.max(0, allowance);
}

/** The 403 for a body that would take the open uploads past a byte limit. */
export function overByteLimit(limits: UploadLimits): RegistryError {
  const limit = Math.min(limits.bytesPerCaller, limits.bytesPerRepository);
  return new RegistryError(
    "DENIED",
    `upload limit: open uploads may hold at most ${limit} bytes per user and repository; finish or cancel other uploads first`,
    403,
  );
}

/** Index folder of sessions started by anonymous callers (no SHA-256 hex is this word). */
const ANONYMOUS = "anonymous";

/**
 * Record a new session in the index (before its upload object is created, so
 * that a crash in between leaves an entry the sweep removes, never a session
 * it cannot find).
 */
export async function registerSession(storage: StorageDriver, owner: string | undefined, name: string, uuid: string): Promise<void> {
  await storage.write(callerUpload(owner ?? ANONYMOUS, uuid), new TextEncoder().encode(name));
}

/**
 * Forget a session whose upload object is gone already (moved into place by
 * its commit): only its index entry is left to remove, with nothing to list.
 */
export async function forgetSession(storage: StorageDriver, owner: string | undefined, uuid: string): Promise<void> {
  await storage.delete(callerUpload(owner ?? ANONYMOUS, uuid));
}

/** Remove a session and its index entry. */
export async function removeSession(storage: StorageDriver, owner: string | undefined, name: string, uuid: string): Promise<void> {
  await storage.deletePrefix(uploadDir(name, uuid));
  await storage.delete(callerUpload(owner ?? ANONYMOUS, uuid));
}

/** Options of {@link removeAbandonedUploads}. */
export interface RemoveAbandonedUploadsOptions {
  /** Remove sessions with no byte written for this long. Default 3600 (one hour). */
  idleSeconds?: number;
  /** Report what would go without removing anything. */
  dryRun?: boolean;
  /** Stop early (what was removed stays removed). */
  signal?: AbortSignal;
  /** Receives one `info` event per removed session. */
  log?: LogHook;
}

/** What {@link removeAbandonedUploads} found. */
export interface RemoveAbandonedUploadsReport {
  /** Sessions looked at. */
  scanned: number;
  /** `<repository>/<uuid>` of each session removed (or that would be, in a dry run). */
  removed: string[];
  /** Bytes those sessions held. */
  bytes: number;
  /** Caller index entries of ended sessions removed. */
  staleIndexEntries: number;
}

/**
 * Remove upload sessions nobody wrote to for `idleSeconds` (abandoned by their
 * client, or left by a crash), found through the session index, and index
 * entries of sessions that no longer exist. Safe beside traffic: a session
 * written to within the idle time is kept. Sessions started by versions
 * before the index existed are left to `collectGarbage`.
 */
export async function removeAbandonedUploads(storage: StorageDriver, options: RemoveAbandonedUploadsOptions = {}): Promise<RemoveAbandonedUploadsReport> {
  const idleMs = (options.idleSeconds ?? 3600) * 1000;
  const report: RemoveAbandonedUploadsReport = { scanned: 0, removed: [], bytes: 0, staleIndexEntries: 0 };
  const now = Date.now();
  for await (const key of eachKey(storage, UPLOADS_INDEX, options.signal)) {
    const entry = parseKey(key);
    // Any other key under the index is a leftover too, removed like the entry of an ended session.
    const uuid = entry.kind === "callerUpload" ? entry.uuid : undefined;
    const name = uuid === undefined ? undefined : await readText(storage, key);
    const info = name === undefined || uuid === undefined ? undefined : await storage.stat(uploadData(name, uuid)).catch(() => undefined);
    if (!info || name === undefined || uuid === undefined) {
      // The session ended (or never got its object): only the index entry is left.
      if (!options.dryRun) await storage.delete(key).catch(() => {});
      report.staleIndexEntries++;
      continue;
    }
    report.scanned++;
    if (now - info.modified.getTime() <= idleMs) continue;
    if (!options.dryRun) {
      await storage.deletePrefix(uploadDir(name, uuid));
      await storage.delete(key);
    }
    report.removed.push(`${name}/${uuid}`);
    report.bytes += info.size;
    options.log?.({ level: "info", msg: options.dryRun ? "would remove abandoned upload" : "removed abandoned upload", repository: name, uuid, size: info.size });
  }
  return report;
}

async function* eachKey(storage: StorageDriver, prefix: string, signal: AbortSignal | undefined): AsyncGenerator<string> {
  let after: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const page = await storage.list(prefix, after === undefined ? { limit: 1000 } : { after, limit: 1000 });
    for (const key of page.keys) yield key;
    if (!page.truncated || page.keys.length === 0) return;
    after = page.keys[page.keys.length - 1];
  }
}
