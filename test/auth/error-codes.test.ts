/**
 * Every auth failure is an `AuthError` with a `code`; a refused token is a
 * `JwtError` (a subclass), so `instanceof JwtError` keeps working. Messages are
 * unchanged (other tests match them); this file pins the codes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AuthError, JwtError, createTokenService, createTokenVerifier, hmacKeys, type TokenVerifier } from "../../src/auth/index.js";
import { parsePem } from "../../src/auth/keys/pem.js";
import { ISSUER, SERVICE, claims, encode, nowSec, rawSignText, signer, type Signer } from "./helpers.js";

const RS256 = { name: "RSASSA-PKCS1-v1_5" };
let key: Signer;
let other: Signer;
let verifier: TokenVerifier;

beforeAll(async () => {
  key = await signer("error-codes");
  other = await signer("error-codes-other");
  verifier = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, rootCertBundle: key.pem.certificate, cacheSize: 0 });
});

function token(payload: Record<string, unknown>, header: Record<string, unknown> = {}, by: Signer = key): Promise<string> {
  const h = JSON.stringify({ typ: "JWT", alg: "RS256", kid: by.vk.kid, ...header });
  return rawSignText(h, JSON.stringify(payload), by.privateKey, RS256);
}

async function refusal(t: string | Promise<string>): Promise<JwtError> {
  const error = await verifier.verify(await t).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JwtError);
  expect(error).toBeInstanceOf(AuthError);
  expect((error as JwtError).name).toBe("JwtError");
  return error as JwtError;
}

function thrown(f: () => unknown): AuthError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AuthError);
    expect(e).not.toBeInstanceOf(JwtError);
    expect((e as AuthError).name).toBe("AuthError");
    return e as AuthError;
  }
  throw new Error("expected a throw");
}

describe("a refused token is a JwtError with a code", () => {
  it.each<[string, () => string | Promise<string>]>([
    ["malformed_token", () => "not.a-token"],
    ["malformed_token", () => token(claims({ sub: 7 }))],
    ["unsigned", () => encode({ alg: "none" }, claims())],
    ["unsupported_critical", () => token(claims(), { crit: ["urn:x"], "urn:x": 1 })],
    ["algorithm_not_allowed", () => encode({ alg: "HS256" }, claims(), new Uint8Array(32))],
    ["wrong_issuer", () => token(claims({ iss: "someone-else" }))],
    ["wrong_audience", () => token(claims({ aud: "another-service" }))],
    ["wrong_token_use", () => token(claims({ token_use: "refresh" }))],
    ["expired", () => token(claims({ exp: nowSec() - 3600 }))],
    ["not_yet_valid", () => token(claims({ nbf: nowSec() + 3600 }))],
    ["unknown_key", () => token(claims(), {}, other)],
    ["unknown_key", () => token(claims(), { kid: undefined })],
    ["bad_signature", async () => (await token(claims())).replace(/.{4}$/, "AAAA")],
  ])("%s", async (code, make) => {
    expect((await refusal(make())).code).toBe(code);
  });
});

describe("bad configuration and key material is an AuthError with a code", () => {
  it("config", () => {
    expect(thrown(() => createTokenVerifier({ issuer: "", audience: SERVICE, rootCertBundle: "x" })).code).toBe("config");
    expect(thrown(() => createTokenService({ issuer: ISSUER, service: SERVICE } as never)).code).toBe("config");
  });

  it("invalid_key", () => {
    expect(thrown(() => hmacKeys({ secret: "short" })).code).toBe("invalid_key");
    expect(thrown(() => parsePem("-----BEGIN PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END PRIVATE KEY-----\n")).code).toBe(
      "invalid_key",
    );
  });
});
