import { describe, expect, it } from "vitest";
import { DEFAULT_SCRYPT, MAX_PASSWORD_LENGTH, hashPassword, needsRehash, verifyPassword } from "../../src/users/index.js";
import { constantTimeEqual, spendDummy } from "../../src/users/password.js";

const FAST = { N: 16, r: 8, p: 1 };

describe("password hashing", () => {
  it("encodes scrypt$N$r$p$salt$hash with a 16-byte salt and verifies", async () => {
    const hash = await hashPassword("Secret123", FAST);
    const parts = hash.split("$");
    expect(parts.slice(0, 4)).toEqual(["scrypt", "16", "8", "1"]);
    expect(atob(parts[4]!)).toHaveLength(16);
    expect(atob(parts[5]!)).toHaveLength(32);
    expect(hash).not.toContain("Secret123");
    expect(await verifyPassword("Secret123", hash)).toBe(true);
    expect(await verifyPassword("secret123", hash)).toBe(false);
    expect(await verifyPassword("", hash)).toBe(false);
  });

  it("salts every hash", async () => {
    expect(await hashPassword("Secret123", FAST)).not.toBe(await hashPassword("Secret123", FAST));
  });

  it("verifies with the parameters stored in the hash, so they can be raised later", async () => {
    const old = await hashPassword("Secret123", { N: 32, r: 4, p: 1 });
    expect(await verifyPassword("Secret123", old, FAST)).toBe(true);
    expect(needsRehash(old, FAST)).toBe(true);
    expect(needsRehash(await hashPassword("x", FAST), FAST)).toBe(false);
  });

  it("treats malformed hashes and over-long passwords as no match, without throwing", async () => {
    const hash = await hashPassword("Secret123", FAST);
    for (const bad of ["", "scrypt$16$8$1$AAAA", "bcrypt$x", "scrypt$3$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA", "scrypt$4194304$8$1$AAAAAAAAAAAAAAAAAAAAAA==$" + "A".repeat(44)]) {
      expect(await verifyPassword("Secret123", bad, FAST)).toBe(false);
    }
    const long = "A".repeat(MAX_PASSWORD_LENGTH + 1);
    expect(await verifyPassword(long, hash, FAST)).toBe(false);
    await expect(hashPassword(long, FAST)).rejects.toThrow(RangeError);
    await expect(hashPassword("x", { N: 3 })).rejects.toThrow(RangeError);
    await spendDummy(long, FAST);
  });

  it("compares in constant time over the longer input: every byte of both is read, wherever the first difference is", () => {
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false);
    // Wall-clock timing is too noisy for a test; the access pattern is what makes
    // the time independent of the contents, so record it instead.
    const reads = (a: number[], b: number[]): { equal: boolean; reads: string[] } => {
      const log: string[] = [];
      const watched = (bytes: number[], label: string) =>
        new Proxy(new Uint8Array(bytes), {
          get(target, prop) {
            if (typeof prop === "string" && /^\d+$/.test(prop)) log.push(`${label}[${prop}]`);
            return Reflect.get(target, prop);
          },
        });
      return { equal: constantTimeEqual(watched(a, "a"), watched(b, "b")), reads: log };
    };
    const all = ["a[0]", "b[0]", "a[1]", "b[1]", "a[2]", "b[2]", "a[3]", "b[3]"];
    for (const [a, b, equal] of [
      [[1, 2, 3, 4], [1, 2, 3, 4], true],
      [[1, 2, 3, 4], [9, 2, 3, 4], false], // differs at the first byte
      [[1, 2, 3, 4], [1, 2, 3, 9], false], // differs at the last byte
      [[1, 2], [1, 2, 3, 4], false], // shorter input: still read up to the longer length
    ] as const) {
      expect(reads([...a], [...b])).toEqual({ equal, reads: all });
    }
  });

  it("default cost N=2^14 r=8 p=1 takes a measurable but moderate time", async () => {
    expect(DEFAULT_SCRYPT).toEqual({ N: 2 ** 14, r: 8, p: 1 });
    const start = performance.now();
    const hash = await hashPassword("Secret123");
    const ms = performance.now() - start;
    expect(await verifyPassword("Secret123", hash)).toBe(true);
    expect(ms).toBeGreaterThan(5);
    expect(ms).toBeLessThan(5_000);
    console.info(`scrypt N=2^14 r=8 p=1: ${ms.toFixed(1)} ms per hash`);
  });
});
