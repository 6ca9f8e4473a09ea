/**
 * The verifier refuses tokens it cannot fully understand: any `crit` header
 * parameter (RFC 7515 §4.1.11: it understands no extension) and time claims
 * that are not safe integers (`1e400` parses to Infinity, which would make a
 * token that never expires). Tokens are signed with the trusted key, so the
 * refusal can only come from these checks.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createTokenAuthorizer, createTokenVerifier, JwtError, type TokenVerifier } from "../../src/auth/index.js";
import { ISSUER, REALM, SERVICE, claims, nowSec, pull, rawSignText, signer, type Signer } from "./helpers.js";

const RS256 = { name: "RSASSA-PKCS1-v1_5" };
let key: Signer;
let verifier: TokenVerifier;

beforeAll(async () => {
  key = await signer("verifier-claims");
  verifier = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, rootCertBundle: key.pem.certificate, cacheSize: 0 });
});

/** A token signed by the trusted key; `extraHeader` is merged into the header. */
function token(payload: string, extraHeader: Record<string, unknown> = {}): Promise<string> {
  const header = JSON.stringify({ typ: "JWT", alg: "RS256", kid: key.vk.kid, ...extraHeader });
  return rawSignText(header, payload, key.privateKey, RS256);
}

/** The claims of a valid token, with `claim` set to the raw JSON text `value`. */
function payloadWith(claim: string, value: string): string {
  return JSON.stringify(claims({ [claim]: "__VALUE__" })).replace('"__VALUE__"', value);
}

async function reason(t: string): Promise<string> {
  const error = await verifier.verify(t).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a refusal").toBeInstanceOf(JwtError);
  return (error as JwtError).message;
}

describe("crit header parameter", () => {
  it("the same token without crit is accepted", async () => {
    expect((await verifier.verify(await token(JSON.stringify(claims())))).subject).toBe("alice");
  });

  it("an extension listed in crit is refused, whatever it names", async () => {
    const payload = JSON.stringify(claims());
    expect(await reason(await token(payload, { crit: ["urn:example:ext"], "urn:example:ext": true }))).toBe(
      'unsupported critical header parameter "urn:example:ext"',
    );
    expect(await reason(await token(payload, { crit: ["b64"], b64: false }))).toBe('unsupported critical header parameter "b64"');
    expect(await reason(await token(payload, { crit: ["exp"] }))).toBe('unsupported critical header parameter "exp"');
  });

  it("a malformed crit is refused", async () => {
    const payload = JSON.stringify(claims());
    for (const crit of [[], "urn:example:ext", [1], [""], null, {}, ["a", "a"]]) {
      expect(await reason(await token(payload, { crit })), JSON.stringify(crit)).toBe("malformed token: crit");
    }
  });

  it("the registry's authorizer answers invalid_token", async () => {
    const authorize = createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, rootCertBundle: key.pem.certificate });
    const request = (t: string) => new Request("http://r/v2/interop/hello/tags/list", { headers: { authorization: `Bearer ${t}` } });
    const good = await token(JSON.stringify(claims()));
    expect(await authorize(request(good), pull("interop/hello"))).toBeUndefined();
    const res = await authorize(request(await token(JSON.stringify(claims()), { crit: ["urn:x"], "urn:x": 1 })), pull("interop/hello"));
    expect(res?.status).toBe(401);
    expect(res?.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

describe("exp, nbf and iat must be safe integers", () => {
  it("integer times, and absent nbf and iat, are accepted", async () => {
    const c = claims();
    delete c.nbf;
    delete c.iat;
    await verifier.verify(await token(JSON.stringify(c)));
    await verifier.verify(await token(payloadWith("exp", String(nowSec() + 300))));
  });

  it("exp that is Infinity, fractional, out of the safe range, or not a number is refused", async () => {
    for (const exp of ["1e400", `${nowSec() + 300}.5`, String(2 ** 53), `"${nowSec() + 300}"`, "null", "true", "[1]"]) {
      expect(await reason(await token(payloadWith("exp", exp))), exp).toBe("malformed token: exp is not an integer");
    }
  });

  it("a missing exp is refused", async () => {
    const c = claims();
    delete c.exp;
    expect(await reason(await token(JSON.stringify(c)))).toBe("malformed token: exp is missing");
  });

  it("nbf that is -Infinity, fractional or not a number is refused", async () => {
    for (const nbf of ["-1e400", `${nowSec() - 10}.5`, `"0"`, "null"]) {
      expect(await reason(await token(payloadWith("nbf", nbf))), nbf).toBe("malformed token: nbf is not an integer");
    }
  });

  it("iat that is not an integer is refused", async () => {
    for (const iat of ["1e400", "1.5", `"${nowSec()}"`, "null", "-1e400"]) {
      expect(await reason(await token(payloadWith("iat", iat))), iat).toBe("malformed token: iat is not an integer");
    }
  });
});
