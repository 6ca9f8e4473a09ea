import { describe, expect, it } from "vitest";
import { createAuditor } from "../../src/audit/auditor.js";
import { storageAuditLog } from "../../src/audit/log.js";
import { AWAITED, eventEmitter, RECORD_PARTS, RECORDED, type PartsSink } from "../../src/events/hook.js";
import type { RegistryEvent } from "../../src/events/model.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

describe("the auditor's event sink", () => {
  it("turns a push into a record with the request's address, and sends it on as an `audit` event", async () => {
    const sent: RegistryEvent[] = [];
    const log = storageAuditLog(memoryStorage());
    const auditor = createAuditor({ log, logHook: () => {}, addressOf: () => "198.51.100.4", onEvent: (e) => void sent.push(e) });
    const emit = eventEmitter({ onEvent: auditor.sink, log: () => {} });
    await emit(new Request("http://r.test/v2/team/app/manifests/v1", { method: "PUT" }), { action: "push", target: { repository: "team/app", tag: "v1", digest: "sha256:ab" }, actor: "alice" });
    const [record] = (await log.list()).records;
    expect(record).toMatchObject({ seq: 1, action: "push", who: { kind: "user", name: "alice" }, from: { channel: "registry", addr: "198.51.100.4" }, result: "ok", project: "team", target: { repository: "team/app", tag: "v1", digest: "sha256:ab" } });
    await new Promise((resolve) => setTimeout(resolve, 5)); // listeners run after the request
    expect(sent).toEqual([expect.objectContaining({ action: "audit", actor: { name: "alice" }, target: { repository: "team/app", audit: { seq: 1, hash: expect.stringMatching(/^[0-9a-f]{64}$/), prev: "0".repeat(64), action: "push", result: "ok", project: "team" } } })]);
  });

  it("a pull is not audited and costs the registry no wait, beside the notifier too (RECORDED)", async () => {
    const auditor = createAuditor({ log: storageAuditLog(memoryStorage()), logHook: () => {}, addressOf: () => undefined });
    const outbox: PartsSink & { [AWAITED]: true } = { [AWAITED]: true, [RECORD_PARTS]: () => RECORDED, record: async () => {} };
    const emit = eventEmitter({ onEvent: [outbox, auditor.sink], log: () => {} });
    expect(emit(new Request("http://r.test/v2/a/manifests/v1"), { action: "pull", target: { repository: "a" } })).toBe(RECORDED);
  });
});
