import { describe, expect, it } from "vitest";
import { jwkThumbprint, libtrustKeyId, libtrustKeyIdOf, VerificationKey } from "../../src/auth/index.js";

// The EC P-256 key of Distribution's docs/spec/auth/jwt.md.
const DISTRIBUTION_EC_JWK = {
  kty: "EC",
  crv: "P-256",
  x: "m7zUpx3b-zmVE5cymSs64POG9QcyEpJaYCD82-549_Q",
  y: "dU3biz8sZ_8GPB-odm8Wxz3lNDr1xcAQQPQaOcr1fmc",
};
const DISTRIBUTION_KID = "PYYO:TEWU:V7JH:26JV:AQTZ:LJC3:SXVJ:XGHA:34F2:2LAQ:ZRMK:Z7Q6";

// RFC 7638 §3.1.
const RFC7638_RSA_JWK = {
  kty: "RSA",
  n:
    "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
  e: "AQAB",
  alg: "RS256",
  kid: "2011-04-29",
};
const RFC7638_THUMBPRINT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";

describe("key ids", () => {
  it("libtrust kid of Distribution's jwt.md EC key", async () => {
    const key = await crypto.subtle.importKey("jwk", DISTRIBUTION_EC_JWK, { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"]);
    expect(await libtrustKeyIdOf(key)).toBe(DISTRIBUTION_KID);
    const spki = new Uint8Array(await crypto.subtle.exportKey("spki", key));
    expect(libtrustKeyId(spki)).toBe(DISTRIBUTION_KID);
    const vk = await VerificationKey.fromJwk(DISTRIBUTION_EC_JWK);
    expect(vk.kid).toBe(DISTRIBUTION_KID);
    expect(vk.kid).toMatch(/^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
  });

  it("RFC 7638 §3.1 thumbprint", () => {
    expect(jwkThumbprint(RFC7638_RSA_JWK)).toBe(RFC7638_THUMBPRINT);
  });

  it("thumbprint ignores members outside the required set and their order", () => {
    const { kty, n, e } = RFC7638_RSA_JWK;
    expect(jwkThumbprint({ n, e, kty })).toBe(RFC7638_THUMBPRINT);
  });

  it("VerificationKey computes both ids for the RFC 7638 key", async () => {
    const vk = await VerificationKey.fromJwk(RFC7638_RSA_JWK);
    expect(vk.thumbprint).toBe(RFC7638_THUMBPRINT);
    expect(vk.bits).toBe(2048);
    expect(vk.kid.split(":")).toHaveLength(12);
  });

  it("thumbprint refuses incomplete keys", () => {
    expect(() => jwkThumbprint({ kty: "EC", crv: "P-256", x: "AA" })).toThrow();
    expect(() => jwkThumbprint({ kty: "XYZ" } as JsonWebKey)).toThrow();
  });
});
