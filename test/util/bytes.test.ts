import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiBytes, b64, b64url, concatBytes, fromB64, fromB64url, fromHex, toArrayBuffer, toHex } from "../../src/util/bytes.js";

describe("util/bytes", () => {
  it("hex matches Buffer and round-trips", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const hex = toHex(bytes);
        expect(hex).toBe(Buffer.from(bytes).toString("hex"));
        expect(fromHex(hex)).toEqual(bytes);
        expect(fromHex(hex.toUpperCase())).toEqual(bytes);
      }),
    );
  });

  it("fromHex refuses odd lengths and non-hex characters", () => {
    expect(() => fromHex("abc")).toThrow("invalid hex");
    expect(() => fromHex("zz")).toThrow("invalid hex");
  });

  it("base64 and base64url match Buffer and round-trip", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(b64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
        expect(b64url(bytes)).toBe(Buffer.from(bytes).toString("base64url"));
        expect(fromB64(b64(bytes))).toEqual(bytes);
        expect(fromB64url(b64url(bytes))).toEqual(bytes);
      }),
    );
  });

  it("concatBytes matches Buffer.concat, with or without the size given", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 }), (chunks) => {
        const whole = new Uint8Array(Buffer.concat(chunks));
        expect(concatBytes(chunks)).toEqual(whole);
        expect(concatBytes(chunks, whole.length)).toEqual(whole);
      }),
    );
  });

  it("toArrayBuffer copies exactly the view's bytes, also of a Node Buffer cut from the shared pool", () => {
    const pooled = Buffer.from("abc.def", "latin1"); // small Buffers share one 8 KiB pool
    expect(pooled.byteOffset > 0 || pooled.buffer.byteLength > pooled.byteLength).toBe(true);
    const copy = toArrayBuffer(pooled);
    expect(copy.byteLength).toBe(7);
    expect(new TextDecoder().decode(copy)).toBe("abc.def");
    const whole = new Uint8Array([1, 2, 3]);
    expect(toArrayBuffer(whole)).toBe(whole.buffer);
  });

  it("asciiBytes gives one byte per character, the same bytes as UTF-8 for ASCII", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_.-]*$/), (s) => {
        expect([...asciiBytes(s)]).toEqual([...new TextEncoder().encode(s)]);
      }),
    );
  });
});
