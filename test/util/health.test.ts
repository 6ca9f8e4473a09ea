import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHealthChecks, type HealthChecks } from "../../src/util/health.js";

/** A check whose outcome the test sets; counts its polls. */
function switchable() {
  const state = { fail: undefined as string | undefined, polls: 0 };
  const check = async () => {
    state.polls++;
    if (state.fail !== undefined) throw new Error(state.fail);
  };
  return { state, check };
}

describe("createHealthChecks", () => {
  let checks: HealthChecks;
  beforeEach(() => {
    checks = createHealthChecks();
  });
  afterEach(() => checks.stop());

  it("is healthy with no checks, and a new check starts healthy", () => {
    expect(checks.healthy).toBe(true);
    checks.add({ name: "a", check: async () => { throw new Error("down"); }, intervalMs: 60_000 });
    expect(checks.healthy).toBe(true);
    expect(checks.failing()).toEqual({});
  });

  it("with threshold 2, fails after two failed polls in a row and recovers at the first success", async () => {
    const { state, check } = switchable();
    checks.add({ name: "storagedriver_inmemory", check, intervalMs: 60_000, threshold: 2 });
    state.fail = "disk gone";
    await checks.pollNow();
    expect(checks.healthy).toBe(true);
    state.fail = undefined;
    await checks.pollNow();
    state.fail = "disk gone";
    await checks.pollNow();
    expect(checks.healthy).toBe(true); // the success in between reset the count
    state.fail = "still gone";
    await checks.pollNow();
    expect(checks.healthy).toBe(false);
    expect(checks.failing()).toEqual({ storagedriver_inmemory: "still gone" });
    await checks.pollNow(); // more failures keep it failing with the latest message
    expect(checks.failing()).toEqual({ storagedriver_inmemory: "still gone" });
    state.fail = undefined;
    await checks.pollNow();
    expect(checks.healthy).toBe(true);
    expect(checks.failing()).toEqual({});
    expect(state.polls).toBe(6);
  });

  it("with threshold 0 (the default), fails at the first failed poll", async () => {
    const { state, check } = switchable();
    checks.add({ name: "c", check, intervalMs: 60_000 });
    state.fail = "no";
    await checks.pollNow();
    expect(checks.failing()).toEqual({ c: "no" });
    state.fail = undefined;
    await checks.pollNow();
    expect(checks.healthy).toBe(true);
  });

  it("reports only the failing checks among several", async () => {
    const a = switchable();
    const b = switchable();
    checks.add({ name: "a", check: a.check, intervalMs: 60_000 });
    checks.add({ name: "b", check: b.check, intervalMs: 60_000 });
    b.state.fail = "b broke";
    await checks.pollNow();
    expect(checks.failing()).toEqual({ b: "b broke" });
    expect(() => checks.add({ name: "a", check: a.check })).toThrow(/already registered/);
  });

  describe("on a schedule", () => {
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it("polls every interval, first one interval after it was added", async () => {
      const { state, check } = switchable();
      checks.add({ name: "t", check, intervalMs: 1000, threshold: 3 });
      state.fail = "x";
      await vi.advanceTimersByTimeAsync(999);
      expect(state.polls).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(state.polls).toBe(1);
      await vi.advanceTimersByTimeAsync(2000);
      expect(state.polls).toBe(3);
      expect(checks.failing()).toEqual({ t: "x" });
      checks.stop();
      await vi.advanceTimersByTimeAsync(5000);
      expect(state.polls).toBe(3);
    });

    it("counts a poll that does not settle within the timeout as failed, and never runs two polls of one check at once", async () => {
      let calls = 0;
      checks.add({ name: "hang", check: () => { calls++; return new Promise<void>(() => {}); }, intervalMs: 1000, timeoutMs: 2500 });
      await vi.advanceTimersByTimeAsync(1000);
      await vi.advanceTimersByTimeAsync(2000);
      expect(calls).toBe(1); // the ticks at 2 s and 3 s found the first poll still running
      expect(checks.healthy).toBe(true);
      await vi.advanceTimersByTimeAsync(500);
      expect(checks.failing()).toEqual({ hang: "health check timed out after 2500 ms" });
    });
  });

  it("refuses a bad interval or threshold", () => {
    expect(() => checks.add({ name: "x", check: async () => {}, intervalMs: 0 })).toThrow(/interval/);
    expect(() => checks.add({ name: "y", check: async () => {}, threshold: -1 })).toThrow(/threshold/);
  });
});
