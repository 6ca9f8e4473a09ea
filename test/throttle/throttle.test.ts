import { describe, expect, it } from "vitest";
import { createThrottle } from "../../src/throttle/index.js";

describe("sign-in throttle", () => {
  it("answers the first failures, then locks (name, address) for a time that doubles, and the lock ends", () => {
    let now = 1_000_000;
    const throttle = createThrottle({}, () => now);
    for (let i = 0; i < 5; i++) {
      expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(0);
      throttle.failed("admin", "10.0.0.9");
    }
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(0); // five free failures
    throttle.failed("admin", "10.0.0.9");
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(1000);
    now += 1000;
    throttle.failed("admin", "10.0.0.9");
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(2000);
    // Other addresses are not locked: the administrator signs in from elsewhere.
    expect(throttle.retryAfter("admin", "10.0.0.1")).toBe(0);
    now += 2000;
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(0);
  });

  it("caps the lock at 15 minutes and forgets it afterwards", () => {
    let now = 0;
    const throttle = createThrottle({}, () => now);
    for (let i = 0; i < 40; i++) throttle.failed("admin", "10.0.0.9");
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(15 * 60_000);
    now += 15 * 60_000;
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(0);
    now += 15 * 60_000 + 1;
    throttle.failed("admin", "10.0.0.9"); // counts were forgotten: a free failure again
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(0);
  });

  it("a success clears its pair", () => {
    const throttle = createThrottle({}, () => 0);
    for (let i = 0; i < 5; i++) throttle.failed("alice", "a");
    throttle.succeeded("alice", "a");
    throttle.failed("alice", "a");
    expect(throttle.retryAfter("alice", "a")).toBe(0);
  });

  it("locks an address that sprays many names, for every name", () => {
    const throttle = createThrottle({}, () => 0);
    for (let i = 0; i < 21; i++) throttle.failed(`user${i}`, "6.6.6.6");
    expect(throttle.retryAfter("someone-else", "6.6.6.6")).toBeGreaterThan(0);
    expect(throttle.retryAfter("someone-else", "7.7.7.7")).toBe(0);
  });

  it("a name under attack from many addresses: one failure locks a pair at once, a fresh address still gets in", () => {
    const throttle = createThrottle({}, () => 0);
    for (let i = 0; i < 51; i++) throttle.failed("admin", `10.1.0.${i}`);
    throttle.failed("admin", "10.2.0.1");
    expect(throttle.retryAfter("admin", "10.2.0.1")).toBe(15 * 60_000);
    expect(throttle.retryAfter("admin", "192.168.1.5")).toBe(0);
  });

  it("counts a name whatever its case, as the user store compares names", () => {
    const throttle = createThrottle({}, () => 0);
    for (const name of ["admin", "Admin", "ADMIN", "aDmin", "adMin", "admIn"]) throttle.failed(name, "10.0.0.9");
    expect(throttle.retryAfter("admin", "10.0.0.9")).toBe(1000);
    expect(throttle.retryAfter("ADMIN", "10.0.0.9")).toBe(1000);
  });
});
