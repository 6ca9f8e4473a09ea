/**
 * The outbox and its lease on the S3 driver (Ceph radosgw on loopback):
 * three notifiers, each with its own driver instance on one bucket root, as
 * three processes would be, deliver every event once.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createNotifier } from "../../src/events/index.js";
import { s3Storage } from "../../src/storage/s3/index.js";
import { makeRegistry, pushImage } from "../registry/helpers.js";
import { freshRoot, useRadosgw } from "../storage/helpers/rgw.js";
import { startReceiver, waitFor } from "./receiver.js";

const rgw = useRadosgw();

describe("createNotifier on s3 (radosgw)", () => {
  const root = freshRoot("events");
  afterAll(async () => {
    await s3Storage(rgw.options()).deletePrefix(root);
  });

  it("three notifiers on one bucket root deliver each of 30 events exactly once and empty the outbox", async () => {
    const sink = await startReceiver();
    const store = () => s3Storage({ ...rgw.options(), rootDirectory: root });
    const notifiers = [0, 1, 2].map(() => createNotifier({ storage: store(), endpoints: [{ name: "ci", url: sink.url }], includeReferences: true, pollMs: 50, leaseMs: 5_000 }));
    try {
      const registries = notifiers.map((n) => makeRegistry({ storage: store(), onEvent: n }));
      for (const n of notifiers) n.start();
      for (let i = 0; i < 10; i++) await pushImage(registries[i % 3]!, `r${i % 3}`, `t${i}`, `s${i}`);
      await waitFor(() => sink.events().length >= 30, "30 events");
      const events = sink.events();
      expect(events.length).toBe(30);
      expect(new Set(events.map((e) => e.id)).size).toBe(30);
      // The events of one process keep their order: a manifest's push comes after the pushes of what it references.
      const at = new Map(events.map((e, i) => [`${e.action} ${e.target.repository} ${e.target.digest}`, i]));
      const manifests = events.filter((e) => e.target.references !== undefined);
      expect(manifests).toHaveLength(10);
      for (const m of manifests) {
        for (const r of m.target.references!) expect(at.get(`push ${m.target.repository} ${r.digest}`)).toBeLessThan(at.get(`push ${m.target.repository} ${m.target.digest}`)!);
      }
    } finally {
      for (const n of notifiers) await n.close();
      await sink.close();
    }
    expect((await store().list("_events/outbox")).keys).toEqual([]);
  });
});
