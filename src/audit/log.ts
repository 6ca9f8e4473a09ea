/**
 * The audit log on a storage driver: one object per record under
 * `_audit/log/<seq>` (12 digits, so key order is record order), appended
 * by any number of processes sharing the storage.
 *
 * A sequence number is claimed by creating its object with
 * `append(key, bytes, { expectedSize: 0 })`: the driver contract's one-writer
 * rule lets exactly one writer create it (a second append finds the object
 * non-empty, or in progress, and fails with `conflict`). The loser re-reads
 * the tail, re-hashes and tries the next number. So the records form one
 * chain without gaps and no process holds a lock. `_audit/head` (the last
 * sequence number and hash a writer saw) lets `verify` notice records removed
 * from the end; see docs/audit.md.
 *
 * @module
 */
import type { StorageDriver } from "../storage/driver.js";
import { StorageError } from "../storage/driver.js";
import { readAll } from "../util/streams.js";
import { decodeRecord, encodeRecord, GENESIS, hashOf, type AuditEntry, type AuditRecord } from "./record.js";

/** Where the records live. */
export const AUDIT_PREFIX = "_audit/log";
/** The last record a writer appended (a hint for writers, a tail check for `verify`). */
export const AUDIT_HEAD = "_audit/head";
/** A record is small; anything larger is not one. */
const MAX_RECORD = 64 * 1024;
/** Tries to claim a sequence number before an append gives up (each loss means another writer progressed). */
const CLAIM_TRIES = 50;
/**
 * Waits of 10 ms for a last record that cannot be read whole, before it is
 * taken as torn (a process killed in mid-append) and chained onto as it is:
 * `verify` then reports it, and the log goes on rather than stop for good.
 */
const TORN_AFTER_WAITS = 50;

/** The key of record `seq`. */
export function recordKey(seq: number): string {
  return `${AUDIT_PREFIX}/${String(seq).padStart(12, "0")}`;
}

/** The sequence number of a record key, or `undefined` for any other key. */
export function seqOfKey(key: string): number | undefined {
  const match = /^_audit\/log\/(\d{12})$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/** Options of {@link storageAuditLog}. */
export interface AuditLogOptions {
  /** The time of a new record; default now. */
  now?: () => Date;
}

/** Which records {@link AuditLog.list} returns. */
export interface AuditQuery {
  /** Only records after this sequence number (paging). */
  after?: number;
  /** At most this many (default 100, at most 1000). */
  limit?: number;
  /** Only records at or after this time. */
  since?: Date;
  /** Only records of this project. */
  project?: string;
}

/** One page of {@link AuditLog.list}. */
export interface AuditPage {
  /** The records, in sequence order. */
  records: AuditRecord[];
  /** The `after` of the next page, when more records may follow. */
  next?: number;
}

/** An append-only, hash-chained audit log. */
export interface AuditLog {
  /** Append `entry`; resolves to the stored record once it is durable. */
  append(entry: AuditEntry): Promise<AuditRecord & { hash: string }>;
  /** Read records in order, filtered and paged. */
  list(query?: AuditQuery): Promise<AuditPage>;
}

/** The audit log kept in `storage` (see the module comment for the layout). */
export function storageAuditLog(storage: StorageDriver, options: AuditLogOptions = {}): AuditLog {
  const now = options.now ?? (() => new Date());
  /** The tail as this process last saw it; refreshed from storage when a claim is lost. */
  let tail: { seq: number; hash: string } | undefined;
  /** Appends of this process one at a time: they would only race each other for the same number. */
  let queue: Promise<unknown> = Promise.resolve();

  const appendOnce = async (entry: AuditEntry): Promise<AuditRecord & { hash: string }> => {
    let waits = 0;
    for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
      tail ??= await findTail(storage, waits >= TORN_AFTER_WAITS);
      if (!tail) {
        if (++waits > 2 * TORN_AFTER_WAITS) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
        attempt--; // waiting is not a lost race
        continue;
      }
      const record: AuditRecord = { ...entry, seq: tail.seq + 1, time: now().toISOString(), prev: tail.hash };
      const bytes = encodeRecord(record);
      try {
        await storage.append(recordKey(record.seq), bytes, { expectedSize: 0 });
      } catch (error) {
        if (!(error instanceof StorageError && error.code === "conflict")) throw error;
        tail = undefined; // another writer took this number: read the tail again
        continue;
      }
      const hash = await hashOf(bytes);
      tail = { seq: record.seq, hash };
      // Only a hint (a stale head is fine, see verify); a failure here does not undo the record.
      await storage.write(AUDIT_HEAD, new TextEncoder().encode(JSON.stringify(tail))).catch(() => undefined);
      return { ...(decodeRecord(bytes) as AuditRecord), hash };
    }
    throw new Error(`audit log: no sequence number claimed after ${CLAIM_TRIES} tries`);
  };

  return {
    append(entry) {
      const result = queue.then(() => appendOnce(entry));
      queue = result.catch(() => undefined);
      return result;
    },
    list: (query = {}) => listRecords(storage, query),
  };
}

/** The stored bytes of record `seq`, or `undefined` when it is missing. */
export async function readRecordBytes(storage: StorageDriver, seq: number): Promise<Uint8Array | undefined> {
  const stream = await storage.read(recordKey(seq));
  return stream && readAll(stream, MAX_RECORD, () => new RangeError("audit record too large")).catch(() => undefined);
}

/** The last record's number and hash, found from the head hint forward (`{0, GENESIS}` for an empty log). */
async function findTail(storage: StorageDriver, takeTorn: boolean): Promise<{ seq: number; hash: string } | undefined> {
  const hint = await readHead(storage);
  // The head names a record that is gone (removed from the end): look from the beginning rather than trust it.
  const last = (hint && hint.seq > 1 ? await lastSeq(storage, recordKey(hint.seq - 1)) : undefined) ?? (await lastSeq(storage, undefined));
  if (last === undefined) return { seq: 0, hash: GENESIS };
  const bytes = await readRecordBytes(storage, last);
  // Not whole yet (another writer's append in progress): the caller looks again, until it takes it as torn.
  if (!bytes || (!takeTorn && !decodeRecord(bytes))) return undefined;
  return { seq: last, hash: await hashOf(bytes) };
}

/** The largest record number after the key `after`, paging through the listing. */
async function lastSeq(storage: StorageDriver, after: string | undefined): Promise<number | undefined> {
  let last: number | undefined;
  for (;;) {
    const page = await storage.list(AUDIT_PREFIX, { ...(after ? { after } : {}), limit: 1000 });
    for (const key of page.keys) last = seqOfKey(key) ?? last;
    if (!page.truncated || page.keys.length === 0) return last;
    after = page.keys[page.keys.length - 1];
  }
}

/** The head hint, or `undefined` when absent or unreadable. */
export async function readHead(storage: StorageDriver): Promise<{ seq: number; hash: string } | undefined> {
  const stream = await storage.read(AUDIT_HEAD);
  if (!stream) return undefined;
  const bytes = await readAll(stream, 1024, () => new RangeError("audit head too large")).catch(() => undefined);
  try {
    const head = bytes && (JSON.parse(new TextDecoder().decode(bytes)) as { seq?: unknown; hash?: unknown });
    return head && Number.isSafeInteger(head.seq) && typeof head.hash === "string" ? { seq: head.seq as number, hash: head.hash } : undefined;
  } catch {
    return undefined;
  }
}

async function listRecords(storage: StorageDriver, query: AuditQuery): Promise<AuditPage> {
  const limit = Math.min(Math.max(query.limit ?? 100, 1), 1000);
  const since = query.since?.getTime();
  const records: AuditRecord[] = [];
  let after = query.after !== undefined && query.after > 0 ? recordKey(query.after) : undefined;
  for (;;) {
    const page = await storage.list(AUDIT_PREFIX, { ...(after ? { after } : {}), limit: 200 });
    for (const key of page.keys) {
      after = key;
      const seq = seqOfKey(key);
      const bytes = seq === undefined ? undefined : await readRecordBytes(storage, seq);
      const record = bytes && decodeRecord(bytes);
      if (!record) continue; // an append still in progress, or damage that `verify` reports
      if (since !== undefined && !(Date.parse(record.time) >= since)) continue;
      if (query.project !== undefined && record.project !== query.project) continue;
      records.push(record);
      if (records.length === limit) return { records, next: record.seq };
    }
    if (!page.truncated || page.keys.length === 0) return { records };
  }
}
