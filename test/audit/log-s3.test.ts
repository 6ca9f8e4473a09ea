/**
 * The audit log on the S3 driver against a real S3 server (Ceph radosgw on
 * loopback): three writers (three drivers, as three processes) appending at
 * once make one chain without gaps, and verify finds a deleted record.
 */
import { describe, expect, it } from "vitest";
import { recordKey, storageAuditLog } from "../../src/audit/log.js";
import { verifyAuditLog } from "../../src/audit/verify.js";
import { s3Storage } from "../../src/storage/s3/index.js";
import { freshRoot, useRadosgw } from "../storage/helpers/rgw.js";

const rgw = useRadosgw();

describe("audit log on s3 (radosgw)", () => {
  it("concurrent appenders from three drivers claim each number once; a deleted record is found", async () => {
    const root = freshRoot("audit");
    const drivers = [0, 1, 2].map(() => s3Storage({ ...rgw.options(), rootDirectory: root }));
    try {
      const logs = drivers.map((d) => storageAuditLog(d));
      const stored = await Promise.all(Array.from({ length: 24 }, (_, i) =>
        logs[i % 3]!.append({ action: "push", who: { kind: "user", name: `u${i}` }, result: "ok", target: { repository: "team/app" }, project: "team" })));
      expect(new Set(stored.map((r) => r.seq))).toEqual(new Set(Array.from({ length: 24 }, (_, i) => i + 1)));
      const report = await verifyAuditLog(drivers[0]!);
      expect(report.problems).toEqual([]);
      expect(report.records).toBe(24);
      await drivers[1]!.delete(recordKey(7));
      expect((await verifyAuditLog(drivers[2]!)).problems).toEqual([{ seq: 7, problem: "record 7 is missing" }]);
    } finally {
      await s3Storage(rgw.options()).deletePrefix(root);
    }
  });
});
