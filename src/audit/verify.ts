/**
 * `verify`: walk the audit log from record 1 and check the chain. Record `n`
 * must exist for every `n` up to the last one, decode, carry `seq = n`, and
 * hold in `prev` the SHA-256 of record `n - 1`'s stored bytes. The head hint
 * must not name a record past the end (records removed from the end) nor a
 * hash other than its record's (the last record edited).
 *
 * @module
 */
import type { StorageDriver } from "../storage/driver.js";
import { AUDIT_PREFIX, readHead, readRecordBytes, seqOfKey } from "./log.js";
import { decodeRecord, GENESIS, hashOf } from "./record.js";

/** One break in the chain. */
export interface AuditProblem {
  /** The record at which the chain breaks. */
  seq: number;
  /** What is wrong. */
  problem: string;
}

/** What {@link verifyAuditLog} found. */
export interface AuditVerifyReport {
  /** Records checked. */
  records: number;
  /** The SHA-256 of the last record: compare it with a copy kept elsewhere (an event receiver) to catch a rewritten log. */
  lastHash: string;
  /** Every break found; empty when the log is intact. */
  problems: AuditProblem[];
}

/** Check the whole chain (see the module comment). */
export async function verifyAuditLog(storage: StorageDriver): Promise<AuditVerifyReport> {
  const problems: AuditProblem[] = [];
  const hashes = new Map<number, string>();
  let expected = 1;
  let prevHash = GENESIS;
  let records = 0;
  let after: string | undefined;
  for (;;) {
    const page = await storage.list(AUDIT_PREFIX, { ...(after ? { after } : {}), limit: 1000 });
    for (const key of page.keys) {
      after = key;
      const seq = seqOfKey(key);
      if (seq === undefined) {
        problems.push({ seq: expected, problem: `unexpected object ${key}` });
        continue;
      }
      if (seq > expected) {
        problems.push({ seq: expected, problem: seq - expected === 1 ? `record ${expected} is missing` : `records ${expected} to ${seq - 1} are missing` });
        prevHash = ""; // nothing can chain to a missing record
      }
      const bytes = await readRecordBytes(storage, seq);
      const record = bytes && decodeRecord(bytes);
      records++;
      expected = seq + 1;
      if (!bytes || !record) {
        problems.push({ seq, problem: "not a readable record" });
        prevHash = bytes ? await hashOf(bytes) : "";
        continue;
      }
      if (record.seq !== seq) problems.push({ seq, problem: `holds seq ${record.seq}` });
      else if (prevHash !== "" && record.prev !== prevHash) problems.push({ seq, problem: `prev does not match record ${seq - 1}: it was edited, replaced or removed` });
      prevHash = await hashOf(bytes);
      hashes.set(seq, prevHash);
    }
    if (!page.truncated || page.keys.length === 0) break;
  }
  const last = expected - 1;
  const head = await readHead(storage);
  if (head && head.seq > last) problems.push({ seq: last + 1, problem: `records ${last + 1} to ${head.seq} were removed from the end` });
  else if (head && head.seq > 0 && hashes.has(head.seq) && hashes.get(head.seq) !== head.hash) {
    problems.push({ seq: head.seq, problem: "does not match the head's hash: it was edited" });
  }
  return { records, lastHash: last > 0 ? (hashes.get(last) ?? "") : GENESIS, problems };
}
