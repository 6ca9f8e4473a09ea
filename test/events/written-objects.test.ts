/**
 * The outbox objects a notifier keeps of what it wrote: never more bytes than
 * its bound, room given back when one is delivered or all are dropped.
 */
import { describe, expect, it } from "vitest";
import { WrittenObjects } from "../../src/events/written-objects.js";

const lines = (size: number) => ({ bytes: new Uint8Array(size), starts: [0], ends: [size] });

describe("WrittenObjects", () => {
  it("keeps objects up to its bound of bytes, and makes room again as they are forgotten or cleared", () => {
    const kept = new WrittenObjects(100);
    const a = lines(60);
    kept.keep("a", a);
    kept.keep("b", lines(50)); // 110 > 100: not kept
    expect(kept.get("a")).toBe(a);
    expect(kept.get("b")).toBeUndefined();
    kept.keep("c", lines(40)); // exactly 100
    expect(kept.get("c")).toBeDefined();
    kept.forget("a");
    kept.forget("a"); // twice: counted once
    expect(kept.get("a")).toBeUndefined();
    kept.keep("d", lines(60)); // 40 + 60
    expect(kept.get("d")).toBeDefined();
    kept.keep("e", lines(1));
    expect(kept.get("e")).toBeUndefined();
    kept.clear();
    expect(kept.get("c")).toBeUndefined();
    kept.keep("f", lines(100));
    expect(kept.get("f")).toBeDefined();
  });
});
