/**
 * auth.token.jwks and signingalgorithms: keys found by the JWKS `kid`, the
 * algorithm allow-list and a JWK's own `alg`, algorithm-confusion attempts,
 * bad JWKS files, the published JWKS, and autoredirect realms.
 */
import { describe, expect, it } from "vitest";
import {
  AuthError, createJwksHandler, createTokenAuthorizer, createTokenVerifier, generatedKeys, jwksOf, parseJwks, signJwt,
  type JsonWebKeySet, type JwsAlgorithm,
} from "../../src/auth/index.js";
import { toArrayBuffer, utf8 } from "../../src/util/bytes.js";
import { ISSUER, SERVICE, encode, rawSign, signer } from "./helpers.js";

const now = () => 1_700_000_000_000;
const claims = (extra: object = {}) => ({ iss: ISSUER, aud: SERVICE, sub: "alice", exp: 1_700_000_600, nbf: 1_699_999_900, iat: 1_700_000_000, access: [], ...extra });

interface TestKey {
  publicJwk: JsonWebKey;
  /** The private key imported for `alg`. */
  privateFor(alg: JwsAlgorithm): Promise<CryptoKey>;
}

const RSA_PARAMS = { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" };

async function rsaKey(): Promise<TestKey> {
  const pair = (await crypto.subtle.generateKey(RSA_PARAMS, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", pair.privateKey);
  const { kty, n, e } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return {
    publicJwk: { kty, n, e },
    privateFor: (alg) => {
      const hash = `SHA-${alg.slice(2)}`;
      const params = alg.startsWith("PS") ? { name: "RSA-PSS", hash } : { name: "RSASSA-PKCS1-v1_5", hash };
      return crypto.subtle.importKey("pkcs8", pkcs8, params, false, ["sign"]);
    },
  };
}

async function ecKey(): Promise<TestKey> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return { publicJwk: { kty, crv, x, y }, privateFor: async () => pair.privateKey };
}

const keysPromise = Promise.all([rsaKey(), rsaKey(), ecKey()]);

async function fixture() {
  const [rsaA, rsaB, ec] = await keysPromise;
  const jwks: JsonWebKeySet = {
    keys: [
      { ...rsaA.publicJwk, kid: "rsa-a", use: "sig" },
      { ...rsaB.publicJwk, kid: "rsa-b-rs256-only", alg: "RS256" },
      { ...ec.publicJwk, kid: "ec-1" },
    ],
  };
  const sign = async (key: TestKey, alg: JwsAlgorithm, kid: string | undefined, extra: object = {}) =>
    signJwt(claims(extra), { alg, key: await key.privateFor(alg), ...(kid !== undefined ? { kid } : {}) });
  return { rsaA, rsaB, ec, jwks, sign };
}

const verifier = (jwks: string | JsonWebKeySet, algorithms?: JwsAlgorithm[]) =>
  createTokenVerifier({ issuer: ISSUER, audience: SERVICE, jwks, now, ...(algorithms ? { algorithms } : {}) });

describe("auth.token.jwks: keys found by kid", () => {
  it("verifies a token with the JWKS key its kid names, from the JSON text or the object", async () => {
    const { rsaA, ec, jwks, sign } = await fixture();
    for (const source of [jwks, JSON.stringify(jwks)]) {
      const v = verifier(source);
      expect((await v.verify(await sign(rsaA, "RS256", "rsa-a"))).subject).toBe("alice");
      expect((await v.verify(await sign(ec, "ES256", "ec-1"))).subject).toBe("alice");
    }
  });

  it("refuses an unknown kid, a token without kid, and a kid naming another key than the signer", async () => {
    const { rsaA, rsaB, jwks, sign } = await fixture();
    const v = verifier(jwks);
    await expect(v.verify(await sign(rsaA, "RS256", "nope"))).rejects.toMatchObject({ code: "unknown_key" });
    await expect(v.verify(await sign(rsaA, "RS256", undefined))).rejects.toMatchObject({ code: "unknown_key" });
    await expect(v.verify(await sign(rsaB, "RS256", "rsa-a"))).rejects.toMatchObject({ code: "bad_signature" });
  });

  it("does not find a JWKS key by its libtrust id or thumbprint (only by its kid, as Distribution 3)", async () => {
    const { rsaA, jwks, sign } = await fixture();
    const [parsed] = await parseJwks(jwks);
    const v = verifier(jwks);
    await expect(v.verify(await sign(rsaA, "RS256", parsed!.key.kid))).rejects.toMatchObject({ code: "unknown_key" });
    await expect(v.verify(await sign(rsaA, "RS256", parsed!.key.thumbprint))).rejects.toMatchObject({ code: "unknown_key" });
  });

  it("trusts a JWKS alongside a root certificate bundle: tokens of both verify", async () => {
    const { rsaA, jwks, sign } = await fixture();
    const own = await signer("bundle");
    const v = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, jwks, rootCertBundle: own.pem.certificate, now });
    expect((await v.verify(await sign(rsaA, "RS256", "rsa-a"))).subject).toBe("alice");
    const fromBundle = await signJwt(claims({ sub: "bob" }), await own.keys.signingKey(), { x5c: false }); // by libtrust kid
    expect((await v.verify(fromBundle)).subject).toBe("bob");
  });
});

describe("signingalgorithms and a JWK's alg", () => {
  it("refuses a token signed with an allowed key under an algorithm outside the list", async () => {
    const { rsaA, jwks, sign } = await fixture();
    const v = verifier(jwks, ["RS384"]);
    expect((await v.verify(await sign(rsaA, "RS384", "rsa-a"))).subject).toBe("alice");
    await expect(v.verify(await sign(rsaA, "RS256", "rsa-a"))).rejects.toMatchObject({ code: "algorithm_not_allowed" });
  });

  it("holds a key whose JWK names an alg to that alg, even when the list allows another that fits the key", async () => {
    const { rsaB, jwks, sign } = await fixture();
    const v = verifier(jwks, ["RS256", "PS256", "RS512"]);
    expect((await v.verify(await sign(rsaB, "RS256", "rsa-b-rs256-only"))).subject).toBe("alice");
    await expect(v.verify(await sign(rsaB, "PS256", "rsa-b-rs256-only"))).rejects.toMatchObject({ code: "algorithm_not_allowed" });
    await expect(v.verify(await sign(rsaB, "RS512", "rsa-b-rs256-only"))).rejects.toMatchObject({ code: "algorithm_not_allowed" });
  });

  it("refuses alg confusion: HS256 keyed with the RSA public key, alg none, an RSA alg on an EC key, an embedded jwk", async () => {
    const { rsaA, ec, jwks, sign } = await fixture();
    const v = verifier(jwks, ["RS256", "ES256", "PS256"]);
    // HS256 with the public key's bytes as the HMAC secret (the classic confusion attack).
    const hmac = await crypto.subtle.importKey("raw", toArrayBuffer(utf8(JSON.stringify(rsaA.publicJwk))), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const hs = await rawSign({ alg: "HS256", typ: "JWT", kid: "rsa-a" }, claims(), hmac, { name: "HMAC" });
    await expect(v.verify(hs)).rejects.toMatchObject({ code: "algorithm_not_allowed" });
    await expect(v.verify(encode({ alg: "none", kid: "rsa-a" }, claims()))).rejects.toMatchObject({ code: "unsigned" });
    // An EC key's kid on an RS256 token signed by an RSA key.
    await expect(v.verify(await sign(rsaA, "RS256", "ec-1"))).rejects.toMatchObject({ code: "algorithm_not_allowed" });
    // The attacker's own key embedded as `jwk` next to a trusted kid: the kid's key is used, the signature fails.
    const attacker = await ecKey();
    const embedded = await rawSign({ alg: "ES256", kid: "ec-1", jwk: attacker.publicJwk }, claims(), await attacker.privateFor("ES256"), { name: "ECDSA", hash: "SHA-256" });
    await expect(v.verify(embedded)).rejects.toMatchObject({ code: "bad_signature" });
    const embeddedOnly = await rawSign({ alg: "ES256", jwk: attacker.publicJwk }, claims(), await attacker.privateFor("ES256"), { name: "ECDSA", hash: "SHA-256" });
    await expect(v.verify(embeddedOnly)).rejects.toMatchObject({ code: "unknown_key" });
    // The EC key itself still verifies ES256.
    expect((await v.verify(await sign(ec, "ES256", "ec-1"))).subject).toBe("alice");
  });

  it("refuses jwks combined with keys or trustStore (it would be ignored)", async () => {
    expect(() => createTokenVerifier({ issuer: ISSUER, audience: SERVICE, jwks: { keys: [] }, keys: generatedKeys() })).toThrow(/jwks combines with rootCertBundle only/);
  });

  it("refuses an unknown algorithm name in the list", () => {
    expect(() => verifier({ keys: [] }, ["HS384" as JwsAlgorithm])).toThrow(/unsupported JWS algorithm in allow-list: "HS384"/);
  });
});

describe("bad JWKS files: a clear error", () => {
  const shape = (jwks: string | JsonWebKeySet) => () => verifier(jwks);
  it("refuses malformed sets at construction", () => {
    expect(shape("{not json")).toThrow(/JWKS file: not valid JSON/);
    expect(shape("[]")).toThrow(/expected a JSON object/);
    expect(shape("{}")).toThrow(/no "keys" array/);
    expect(shape({ keys: [42] } as unknown as JsonWebKeySet)).toThrow(/key #0: is not a JSON object/);
    expect(shape({ keys: Array.from({ length: 257 }, () => ({ kty: "EC" })) })).toThrow(/more than 256/);
  });

  it("names the key and the reason: missing or duplicate kid, private material, symmetric key, alg that does not fit", async () => {
    const { rsaA, ec } = await fixture();
    const one = (key: object) => shape({ keys: [key as JsonWebKeySet["keys"][number]] });
    expect(one({ ...rsaA.publicJwk })).toThrow(/key #0: has no "kid"/);
    expect(shape({ keys: [{ ...rsaA.publicJwk, kid: "x" }, { ...ec.publicJwk, kid: "x" }] })).toThrow(/key #1 \(kid "x"\): the kid appears twice/);
    expect(one({ ...rsaA.publicJwk, kid: "p", d: "secret" })).toThrow(/kid "p"\): holds private key material \(d\)/);
    expect(one({ kty: "oct", k: "c2VjcmV0", kid: "h" })).toThrow(/holds private key material \(k\)/);
    expect(one({ kty: "oct", kid: "h" })).toThrow(/kty "oct" is not supported/);
    expect(one({ ...ec.publicJwk, kid: "e", alg: "RS256" })).toThrow(/alg RS256 does not fit a key of kty EC crv P-256/);
    expect(one({ ...ec.publicJwk, kid: "e", alg: "ES384" })).toThrow(/alg ES384 does not fit/);
    expect(one({ ...rsaA.publicJwk, kid: "n", alg: "none" })).toThrow(/alg "none" is not a supported signature algorithm/);
    expect(one({ ...rsaA.publicJwk, kid: "u", use: "wrap" })).toThrow(/unknown "use"/);
  });

  it("refuses keys that cannot be used (a 1024-bit RSA key, a broken EC point) when the keys are read", async () => {
    const small = (await crypto.subtle.generateKey({ ...RSA_PARAMS, modulusLength: 1024 }, true, ["sign", "verify"])) as CryptoKeyPair;
    const { kty, n, e } = await crypto.subtle.exportKey("jwk", small.publicKey);
    await expect(parseJwks({ keys: [{ kty, n, e, kid: "small" }] })).rejects.toThrow(/kid "small"\): cannot be used: RSA key of 1024 bits refused/);
    await expect(parseJwks({ keys: [{ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA", kid: "bad" }] })).rejects.toThrow(/kid "bad"\): cannot be used/);
    const v = verifier({ keys: [{ kty, n, e, kid: "small" }] });
    await expect(v.verify(encode({ alg: "RS256", kid: "small" }, claims(), new Uint8Array(8)))).rejects.toThrow(/1024 bits/);
  });

  it("refuses an empty set without a bundle, skips encryption keys, and is an AuthError", async () => {
    const { rsaA } = await fixture();
    const empty = verifier({ keys: [] });
    await expect(empty.verify(encode({ alg: "RS256", kid: "a" }, claims(), new Uint8Array(8)))).rejects.toThrow(/no token signing key/);
    expect(await parseJwks({ keys: [{ ...rsaA.publicJwk, kid: "enc", use: "enc" }] })).toEqual([]);
    try {
      verifier("{}");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AuthError);
      expect((e as AuthError).code).toBe("invalid_key");
    }
  });
});

describe("the published JWKS", () => {
  it("lists the provider's public keys with the kid its tokens carry; a verifier trusting it accepts them", async () => {
    const keys = generatedKeys({ alg: "ES256" });
    const handler = createJwksHandler(keys);
    const response = await handler(new Request("http://registry.test/.well-known/jwks.json"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const set = (await response.json()) as JsonWebKeySet;
    const signing = await keys.signingKey();
    expect(set.keys).toHaveLength(1);
    expect(set.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", kid: signing.kid, use: "sig" });
    for (const secret of ["d", "p", "q", "k"]) expect(set.keys[0]).not.toHaveProperty(secret);
    expect(await jwksOf(keys)).toEqual(set);
    const token = await signJwt(claims(), signing, { x5c: false });
    expect((await verifier(set).verify(token)).subject).toBe("alice");
    // With the certificate chain in x5c as well (the token service's default), the JWKS kid still finds the key.
    expect(signing.x5c?.length).toBeGreaterThan(0);
    const withChain = await signJwt(claims({ sub: "carol" }), signing);
    expect(JSON.parse(atob(withChain.split(".")[0]!.replace(/-/g, "+").replace(/_/g, "/")))).toHaveProperty("x5c");
    expect((await verifier(set).verify(withChain)).subject).toBe("carol");
    expect((await handler(new Request("http://registry.test/.well-known/jwks.json", { method: "POST" }))).status).toBe(405);
    const head = await handler(new Request("http://registry.test/.well-known/jwks.json", { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
  });
});

describe("autoredirect: the realm from the request", () => {
  const authorizer = (autoRedirect: boolean | { path?: string }) =>
    createTokenAuthorizer({ realm: "https://fixed.example/token", service: SERVICE, issuer: ISSUER, jwks: { keys: [] }, autoRedirect, now });
  const realmOf = async (authorize: ReturnType<typeof authorizer>, url: string, headers: Record<string, string> = {}) => {
    const response = (await authorize(new Request(url, { headers }), []))!;
    expect(response.status).toBe(401);
    return /realm="([^"]*)"/.exec(response.headers.get("www-authenticate")!)![1];
  };

  it("builds <scheme>://<host><path> per request, path default /auth/token, X-Forwarded-Proto honoured", async () => {
    const auto = authorizer(true);
    expect(await realmOf(auto, "http://registry.one:5000/v2/")).toBe("http://registry.one:5000/auth/token");
    expect(await realmOf(auto, "https://other.name/v2/")).toBe("https://other.name/auth/token");
    expect(await realmOf(auto, "http://registry.one:5000/v2/", { "x-forwarded-proto": "https" })).toBe("https://registry.one:5000/auth/token");
    expect(await realmOf(auto, "http://registry.one:5000/v2/", { "x-forwarded-proto": "javascript" })).toBe("http://registry.one:5000/auth/token");
    expect(await realmOf(authorizer({ path: "/service/token" }), "http://h:1/v2/")).toBe("http://h:1/service/token");
    expect(await realmOf(authorizer(false), "http://h:1/v2/")).toBe("https://fixed.example/token");
  });

  it("refuses a path that is not absolute or could break the challenge", () => {
    expect(() => authorizer({ path: "auth/token" })).toThrow(/absolute path/);
    expect(() => authorizer({ path: '/a"b' })).toThrow(/absolute path/);
  });
});
