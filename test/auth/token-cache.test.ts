/** The verified-token cache: bounded, and entries in use survive eviction (second chance). */
import { describe, expect, it } from "vitest";
import { LruCache } from "../../src/auth/verifier/token-cache.js";

describe("LruCache (second chance)", () => {
  it("never holds more than its capacity", () => {
    const cache = new LruCache<number>(3);
    for (let i = 0; i < 100; i++) {
      cache.set(`k${i}`, i);
      if (i % 2 === 0) cache.get(`k${i - 1}`);
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(cache.get("k99")).toBe(99);
  });

  it("evicts the oldest unused entry and keeps the ones in use", () => {
    const cache = new LruCache<string>(3);
    cache.set("a", "A");
    cache.set("b", "B");
    cache.set("c", "C");
    expect(cache.get("a")).toBe("A"); // a is in use
    cache.set("d", "D"); // b (oldest unused) goes
    expect(cache.get("b")).toBeUndefined();
    expect([cache.get("a"), cache.get("c"), cache.get("d")]).toEqual(["A", "C", "D"]);
  });

  it("still evicts when every entry is in use, and never the one just added", () => {
    const cache = new LruCache<number>(2);
    cache.set("x", 1);
    cache.set("y", 2);
    cache.get("x");
    cache.get("y");
    cache.set("z", 3);
    expect(cache.size).toBe(2);
    expect(cache.get("z")).toBe(3);
  });

  it("stores nothing with capacity 0, and forgets deleted keys", () => {
    const none = new LruCache<number>(0);
    none.set("a", 1);
    expect(none.get("a")).toBeUndefined();
    const cache = new LruCache<number>(2);
    cache.set("a", 1);
    cache.delete("a");
    expect(cache.get("a")).toBeUndefined();
  });
});

describe("LruCache keys that share their tail", () => {
  const tail = "s".repeat(40); // longer than the part the map hashes
  const a = `header.payload-a.${tail}`;
  const b = `header.payload-b.${tail}`;

  it("answers only the exact key: a key with the same tail is a miss", () => {
    const cache = new LruCache<string>(4);
    cache.set(a, "A");
    expect(cache.get(a)).toBe("A");
    expect(cache.get(b)).toBeUndefined();
    expect(cache.get(`x${a}`)).toBeUndefined();
    expect(cache.get(a.slice(1))).toBeUndefined();
  });

  it("does not let another key with the same tail delete the entry", () => {
    const cache = new LruCache<string>(4);
    cache.set(a, "A");
    cache.delete(b);
    expect(cache.get(a)).toBe("A");
    cache.delete(a);
    expect(cache.get(a)).toBeUndefined();
  });

  it("replaces the entry when another key with the same tail is set, and then answers only that key", () => {
    const cache = new LruCache<string>(4);
    cache.set(a, "A");
    cache.set(b, "B");
    expect(cache.get(b)).toBe("B");
    expect(cache.get(a)).toBeUndefined();
    expect(cache.size).toBe(1);
  });

  it("keeps short keys (no longer than the tail) apart", () => {
    const cache = new LruCache<number>(4);
    cache.set("k1", 1);
    cache.set("k12", 12);
    expect([cache.get("k1"), cache.get("k12"), cache.get("1")]).toEqual([1, 12, undefined]);
  });
});
