/** signJwt's cached headers and the base64url encoders (native Buffer and portable). */
import { describe, expect, it } from "vitest";
import { base64url } from "rfc4648";
import { b64url, b64urlText, utf8 } from "../../src/util/bytes.js";
import { decodeJwt, generatedKeys, signJwt } from "../../src/auth/index.js";

describe("base64url", () => {
  it("matches the portable RFC 4648 encoder for every length and byte value", () => {
    for (let n = 0; n < 70; n++) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 37 + n * 11) & 0xff);
      expect(b64url(bytes)).toBe(base64url.stringify(bytes, { pad: false }));
      // a view into a larger buffer encodes only its own bytes
      const big = new Uint8Array(n + 10);
      big.set(bytes, 5);
      expect(b64url(big.subarray(5, 5 + n))).toBe(base64url.stringify(bytes, { pad: false }));
    }
  });

  it("encodes text as its UTF-8 bytes", () => {
    for (const text of ["", "a", '{"sub":"jürgen ✓ 𝄞"}', "x".repeat(1000)]) {
      expect(b64urlText(text)).toBe(base64url.stringify(utf8(text), { pad: false }));
    }
  });
});

describe("signJwt headers", () => {
  it("puts kid and x5c in or leaves them out per call, although headers are kept per key", async () => {
    const key = await generatedKeys({ alg: "ES256" }).signingKey();
    expect(key.kid).toBeTruthy();
    expect(key.x5c?.length).toBeGreaterThan(0);
    const header = async (options?: Parameters<typeof signJwt>[2]) => decodeJwt(await signJwt({ sub: "a" }, key, options)).header;
    for (let round = 0; round < 2; round++) {
      expect(await header()).toMatchObject({ typ: "JWT", alg: "ES256", kid: key.kid, x5c: key.x5c });
      expect(await header({ x5c: false })).not.toHaveProperty("x5c");
      expect(await header({ x5c: false })).toMatchObject({ kid: key.kid });
      expect(await header({ kid: false })).not.toHaveProperty("kid");
      expect(await header({ header: { cty: "x" } })).toMatchObject({ cty: "x", alg: "ES256" });
      expect(await header({ header: { alg: "none" } })).toMatchObject({ alg: "ES256" });
    }
  });
});
