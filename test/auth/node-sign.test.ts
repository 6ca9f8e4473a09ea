import * as nodeCrypto from "node:crypto";
import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import { algorithmSpec, type JwsAlgorithm } from "../../src/auth/jwt/algorithms.js";
import { hmacKeys, pemKeys } from "../../src/auth/keys/keys.js";
import { nodeSign } from "../../src/auth/jwt/node-sign.js";

const data = new TextEncoder().encode("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9");

/** The module object node-sign.ts gets from process.getBuiltinModule (spyable, unlike the ESM namespace). */
const cryptoModule = createRequire(import.meta.url)("node:crypto") as typeof nodeCrypto;

const SECRET = "0123456789abcdef0123456789abcdef-node-sign";

/** A signing key loaded the way a server loads it (pemKeys / hmacKeys: non-extractable), and a WebCrypto key that verifies it. */
async function loaded(alg: JwsAlgorithm): Promise<{ sign: CryptoKey; verify: CryptoKey }> {
  if (alg === "HS256") {
    const sign = (await hmacKeys({ secret: SECRET }).signingKey()).key;
    const verify = await crypto.subtle.importKey("raw", new TextEncoder().encode(SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    return { sign, verify };
  }
  // RSA-2048 even for RS512 (generating 4096-bit keys takes seconds); the key goes through pemKeys like a server's.
  const made = await pair(alg, true);
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", made.sign)).toString("base64");
  const sign = (await pemKeys({ privateKey: `-----BEGIN PRIVATE KEY-----\n${pkcs8}\n-----END PRIVATE KEY-----\n`, alg }).signingKey()).key;
  return { sign, verify: made.verify };
}

/** A key pair made straight with WebCrypto (not through this library). */
async function pair(alg: JwsAlgorithm, extractable = false): Promise<{ sign: CryptoKey; verify: CryptoKey }> {
  const spec = algorithmSpec(alg)!;
  if (alg === "HS256") {
    const key = (await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, extractable, ["sign", "verify"])) as CryptoKey;
    return { sign: key, verify: key };
  }
  const gen =
    spec.family === "RSA"
      ? { ...(spec.importParams as RsaHashedImportParams), modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }
      : spec.importParams;
  const keys = (await crypto.subtle.generateKey(gen as AlgorithmIdentifier, extractable, ["sign", "verify"])) as CryptoKeyPair;
  return { sign: keys.privateKey, verify: keys.publicKey };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("nodeSign (node:crypto fast path of signJwt)", () => {
  for (const alg of ["RS256", "RS512", "PS256", "ES256", "ES384", "ES512", "EdDSA", "HS256"] as JwsAlgorithm[]) {
    it(`${alg}: WebCrypto verifies what node:crypto signed with a loaded (non-extractable) key, built without KeyObject.from`, async () => {
      const from = vi.spyOn(nodeCrypto.KeyObject, "from");
      const { sign, verify } = await loaded(alg);
      expect(sign.extractable).toBe(false);
      const result = nodeSign(alg, sign, data);
      // RSA signs on the thread pool (a promise), so the event loop is not held for ~0.7 ms; the rest in the caller's thread.
      expect(result instanceof Promise).toBe(alg.startsWith("RS") || alg.startsWith("PS"));
      const sig = await result;
      expect(sig).toBeInstanceOf(Uint8Array);
      expect(await crypto.subtle.verify(algorithmSpec(alg)!.signParams, verify, sig as Uint8Array<ArrayBuffer>, data)).toBe(true);
      // KeyObject.from() on a non-extractable CryptoKey is DEP0204 (Node 24): the KeyObject comes from the imported bytes.
      expect(from).not.toHaveBeenCalled();
    });
  }

  it("uses KeyObject.from for an extractable key made outside this library", async () => {
    const from = vi.spyOn(nodeCrypto.KeyObject, "from");
    const { sign, verify } = await pair("ES256", true);
    const sig = nodeSign("ES256", sign, data);
    expect(sig).toBeInstanceOf(Uint8Array);
    expect(from).toHaveBeenCalledTimes(1);
    expect(await crypto.subtle.verify(algorithmSpec("ES256")!.signParams, verify, sig as Uint8Array<ArrayBuffer>, data)).toBe(true);
  });

  for (const signedBefore of [false, true]) {
    const which = signedBefore ? "a key that signed before, then fails (the last key used, kept for the next token)" : "a key whose node:crypto signing throws";
    it(`falls back to WebCrypto, for good, on ${which} (workerd's partial node:crypto)`, async () => {
      const { sign } = await loaded("ES256");
      if (signedBefore) expect(nodeSign("ES256", sign, data)).toBeInstanceOf(Uint8Array);
      const native = vi.spyOn(cryptoModule, "sign").mockImplementation(() => {
        throw new TypeError('The "options.key" property must be of type string');
      });
      expect(nodeSign("ES256", sign, data)).toBeUndefined();
      expect(nodeSign("ES256", sign, data)).toBeUndefined();
      expect(native).toHaveBeenCalledTimes(1);
    });
  }

  it("keys and algorithms used in turn each sign with their own key", async () => {
    const a = await loaded("ES256");
    const b = await loaded("ES256");
    const c = await loaded("EdDSA");
    for (let round = 0; round < 3; round++) {
      for (const [alg, { sign, verify }] of [["ES256", a], ["ES256", b], ["EdDSA", c], ["ES256", a]] as const) {
        const sig = nodeSign(alg, sign, data) as Uint8Array<ArrayBuffer>;
        expect(await crypto.subtle.verify(algorithmSpec(alg)!.signParams, verify, sig, data)).toBe(true);
        const other = verify === a.verify ? b.verify : a.verify;
        if (alg === "ES256") expect(await crypto.subtle.verify(algorithmSpec(alg)!.signParams, other, sig, data)).toBe(false);
      }
    }
  });

  it("declines a non-extractable key made outside this library (WebCrypto signs it; no DEP0204)", async () => {
    const from = vi.spyOn(nodeCrypto.KeyObject, "from");
    const { sign } = await pair("ES256");
    expect(nodeSign("ES256", sign, data)).toBeUndefined();
    expect(from).not.toHaveBeenCalled();
  });

  it("declines a public key (the caller falls back to WebCrypto, which refuses it)", async () => {
    const { verify } = await pair("ES256", true);
    expect(nodeSign("ES256", verify, data)).toBeUndefined();
  });
});

describe("RSA signing off the event loop", () => {
  it("keeps the event loop turning while RS256 tokens are signed", async () => {
    const { sign } = await loaded("RS256");
    // The loop spins on setImmediate (no 1 ms timer floor): a turn of the loop is counted whenever the main thread
    // runs, however busy the machine. Signed in the caller's thread, every signature is ready before the first turn.
    let ticks = 0;
    let spinning = true;
    const spin = () => {
      ticks++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    await Promise.all(Array.from({ length: 24 }, () => nodeSign("RS256", sign, data)));
    spinning = false;
    expect(ticks).toBeGreaterThan(0);
  });
});
