/** signJwt's cached headers and the base64url encoders (native Buffer and portable). */
import { describe, expect, it } from "vitest";
import { base64url } from "rfc4648";
import { b64url, b64urlText, fromB64url, utf8 } from "../../src/util/bytes.js";
import { decodeJwt, generatedKeys, hmacKeys, signJwt } from "../../src/auth/index.js";
import { verifySignature } from "../../src/auth/jwt/jwt.js";

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

describe("signJwt's signing input, written into a buffer the next token reuses", () => {
  for (const alg of ["RS256", "PS256", "ES256", "EdDSA"] as const) {
    it(`${alg}: tokens started together, each with claims of another length, each verify against their own claims`, async () => {
      const keys = generatedKeys({ alg });
      const key = await keys.signingKey();
      const publicKey = await (await keys.verificationKeys())[0]!.cryptoKey(alg);
      // RSA is signed on the thread pool where node:crypto exists, so these overlap: the buffer is rewritten by the
      // next call while an earlier signature is still being made.
      const claims = Array.from({ length: 12 }, (_, i) => ({ sub: `user-${i}`, pad: "x".repeat(i * 41) }));
      const tokens = await Promise.all(claims.map((c, n) => signJwt(c, key, { x5c: n % 2 === 0 })));
      for (const [n, token] of tokens.entries()) {
        const decoded = decodeJwt(token);
        expect(decoded.payload).toEqual(claims[n]);
        expect(await verifySignature(decoded, alg, publicKey)).toBe(true);
      }
    });
  }

  it("HS256: tokens made in turn each verify (the MAC reads the buffer before the next token writes it)", async () => {
    const secret = "0123456789abcdef0123456789abcdef-encoding";
    const keys = hmacKeys({ secret });
    const key = await keys.signingKey();
    const claims = Array.from({ length: 6 }, (_, i) => ({ sub: `user-${i}`, pad: "y".repeat(i * 53) }));
    const tokens = await Promise.all(claims.map((c) => signJwt(c, key)));
    const verifyKey = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    for (const [n, token] of tokens.entries()) {
      const decoded = decodeJwt(token);
      expect(decoded.payload).toEqual(claims[n]);
      expect(await verifySignature(decoded, "HS256", verifyKey)).toBe(true);
    }
  });

  it("claims and signing inputs beyond the reused buffer's limit (64 KiB) are encoded and signed from bytes of their own", async () => {
    const keys = generatedKeys({ alg: "ES256" });
    const key = await keys.signingKey();
    const publicKey = await (await keys.verificationKeys())[0]!.cryptoKey("ES256");
    // 30,000 characters of claims pass the limit in UTF-8's worst case (3 bytes each), 70,000 pass it as they are.
    for (const size of [30_000, 70_000]) {
      const claims = { sub: "big", pad: "z".repeat(size) };
      const [big, small] = await Promise.all([signJwt(claims, key), signJwt({ sub: "small" }, key)]);
      // Checked without decodeJwt, which refuses tokens over 64 KiB.
      const dot = big!.lastIndexOf(".");
      const input = new TextEncoder().encode(big!.slice(0, dot));
      expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, publicKey, fromB64url(big!.slice(dot + 1)) as Uint8Array<ArrayBuffer>, input)).toBe(true);
      expect(JSON.parse(new TextDecoder().decode(fromB64url(big!.slice(big!.indexOf(".") + 1, dot))))).toEqual(claims);
      expect(await verifySignature(decodeJwt(small!), "ES256", publicKey)).toBe(true);
    }
  });
});
