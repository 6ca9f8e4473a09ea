import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AUDIT_HEAD, recordKey, storageAuditLog } from "../../src/audit/log.js";
import { decodeRecord, GENESIS, hashOf } from "../../src/audit/record.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { readAll } from "../../src/util/streams.js";

const entry = (n: number, repository = "team/app") => ({
  action: "push", who: { kind: "user" as const, name: `u${n}` }, result: "ok" as const, target: { repository }, project: repository.split("/")[0]!,
});

async function bytesOf(storage: StorageDriver, key: string): Promise<Uint8Array> {
  return readAll((await storage.read(key))!);
}

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("audit log", () => {
  it("chains each record to the SHA-256 of the one before", async () => {
    const storage = memoryStorage();
    const log = storageAuditLog(storage);
    const a = await log.append(entry(1));
    const b = await log.append(entry(2));
    expect(a.seq).toBe(1);
    expect(a.prev).toBe(GENESIS);
    expect(b.prev).toBe(await hashOf(await bytesOf(storage, recordKey(1))));
    expect(b.prev).toBe(a.hash);
    expect(await verifyAuditLog(storage)).toEqual({ records: 2, lastHash: b.hash, problems: [] });
  });

  it("several appenders on one storage (as several processes) make one chain without gaps", async () => {
    const dir = await mkdtemp(join(tmpdir(), "audit-"));
    dirs.push(dir);
    for (const storage of [memoryStorage(), fsStorage({ root: dir })]) {
      const logs = [storageAuditLog(storage), storageAuditLog(storage), storageAuditLog(storage)];
      const stored = await Promise.all(Array.from({ length: 30 }, (_, i) => logs[i % 3]!.append(entry(i))));
      expect(new Set(stored.map((r) => r.seq)).size).toBe(30);
      const report = await verifyAuditLog(storage);
      expect(report.problems).toEqual([]);
      expect(report.records).toBe(30);
      const page = await logs[0]!.list({ limit: 1000 });
      expect(page.records.map((r) => r.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    }
  });

  it("verify finds an edited record, a deleted one and records removed from the end", async () => {
    const storage = memoryStorage();
    const log = storageAuditLog(storage);
    for (let i = 1; i <= 5; i++) await log.append(entry(i));
    // Edited: who becomes someone else.
    const second = decodeRecord(await bytesOf(storage, recordKey(2)))!;
    await storage.write(recordKey(2), new TextEncoder().encode(`${JSON.stringify({ ...second, who: { kind: "user", name: "mallory" } })}\n`));
    expect((await verifyAuditLog(storage)).problems).toEqual([{ seq: 3, problem: expect.stringMatching(/prev does not match record 2/) }]);

    const deleted = memoryStorage();
    const log2 = storageAuditLog(deleted);
    for (let i = 1; i <= 5; i++) await log2.append(entry(i));
    await deleted.delete(recordKey(3));
    expect((await verifyAuditLog(deleted)).problems).toEqual([{ seq: 3, problem: "record 3 is missing" }]);

    const truncated = memoryStorage();
    const log3 = storageAuditLog(truncated);
    for (let i = 1; i <= 5; i++) await log3.append(entry(i));
    await truncated.delete(recordKey(5));
    expect((await verifyAuditLog(truncated)).problems).toEqual([{ seq: 5, problem: "records 5 to 5 were removed from the end" }]);
    // The last record edited in place: the head's hash no longer matches.
    const last = memoryStorage();
    const log4 = storageAuditLog(last);
    for (let i = 1; i <= 3; i++) await log4.append(entry(i));
    const third = decodeRecord(await bytesOf(last, recordKey(3)))!;
    await last.write(recordKey(3), new TextEncoder().encode(`${JSON.stringify({ ...third, result: "refused" })}\n`));
    expect((await verifyAuditLog(last)).problems).toEqual([{ seq: 3, problem: expect.stringMatching(/head's hash/) }]);
  });

  it("a writer whose view of the tail is stale claims the next free number", async () => {
    const storage = memoryStorage();
    const first = storageAuditLog(storage);
    const second = storageAuditLog(storage);
    await first.append(entry(1));
    await second.append(entry(2)); // reads the tail: 1
    await first.append(entry(3)); // thinks the tail is 1; number 2 is taken, so it re-reads and takes 3
    expect((await verifyAuditLog(storage)).problems).toEqual([]);
    expect(JSON.parse(new TextDecoder().decode(await bytesOf(storage, AUDIT_HEAD))).seq).toBe(3);
  });

  it("lists in pages, since a time and by project", async () => {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const storage = memoryStorage();
    const log = storageAuditLog(storage, { now: () => new Date((t += 60_000)) });
    for (let i = 1; i <= 7; i++) await log.append(entry(i, i % 2 === 0 ? "team/app" : "other/x"));
    const first = await log.list({ limit: 3 });
    expect(first.records.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(first.next).toBe(3);
    const second = await log.list({ after: first.next, limit: 3 });
    expect(second.records.map((r) => r.seq)).toEqual([4, 5, 6]);
    expect((await log.list({ after: 6, limit: 3 })).next).toBeUndefined();
    expect((await log.list({ project: "team" })).records.map((r) => r.seq)).toEqual([2, 4, 6]);
    expect((await log.list({ since: new Date("2026-01-01T00:05:00Z") })).records.map((r) => r.seq)).toEqual([5, 6, 7]);
  });
});

describe("audit log after a torn record", () => {
  it("a last record left unreadable (a process killed in mid-append) does not stop the log: it is chained onto and verify names it", async () => {
    const storage = memoryStorage();
    const log = storageAuditLog(storage);
    await log.append(entry(1));
    await storage.append(recordKey(2), new TextEncoder().encode('{"seq":2,"ti'), { expectedSize: 0 });
    const next = await storageAuditLog(storage).append(entry(3));
    expect(next.seq).toBe(3);
    const report = await verifyAuditLog(storage);
    expect(report.problems).toEqual([{ seq: 2, problem: "not a readable record" }]);
    expect(report.records).toBe(3);
  });
});
