import { describe, expect, it } from "vitest";
import { algorithmSpec, type JwsAlgorithm } from "../../src/auth/algorithms.js";
import { nodeSign } from "../../src/auth/node-sign.js";

const data = new TextEncoder().encode("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9");

async function pair(alg: JwsAlgorithm): Promise<{ sign: CryptoKey; verify: CryptoKey }> {
  const spec = algorithmSpec(alg)!;
  if (alg === "HS256") {
    const key = (await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"])) as CryptoKey;
    return { sign: key, verify: key };
  }
  const gen =
    spec.family === "RSA"
      ? { ...(spec.importParams as RsaHashedImportParams), modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }
      : spec.importParams;
  const keys = (await crypto.subtle.generateKey(gen as AlgorithmIdentifier, false, ["sign", "verify"])) as CryptoKeyPair;
  return { sign: keys.privateKey, verify: keys.publicKey };
}

describe("nodeSign (node:crypto fast path of signJwt)", () => {
  for (const alg of ["RS256", "RS512", "PS256", "ES256", "ES384", "ES512", "EdDSA", "HS256"] as JwsAlgorithm[]) {
    it(`${alg}: WebCrypto verifies what node:crypto signed with the same (non-extractable) key`, async () => {
      const { sign, verify } = await pair(alg);
      const result = nodeSign(alg, sign, data);
      // RSA signs on the thread pool (a promise), so the event loop is not held for ~0.7 ms; the rest in the caller's thread.
      expect(result instanceof Promise).toBe(alg.startsWith("RS") || alg.startsWith("PS"));
      const sig = await result;
      expect(sig).toBeInstanceOf(Uint8Array);
      expect(await crypto.subtle.verify(algorithmSpec(alg)!.signParams, verify, sig as Uint8Array<ArrayBuffer>, data)).toBe(true);
    });
  }

  it("declines a public key (the caller falls back to WebCrypto, which refuses it)", async () => {
    const { verify } = await pair("ES256");
    expect(nodeSign("ES256", verify, data)).toBeUndefined();
  });
});

describe("RSA signing off the event loop", () => {
  it("keeps the event loop turning while RS256 tokens are signed", async () => {
    const { sign } = await pair("RS256");
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await Promise.all(Array.from({ length: 24 }, () => nodeSign("RS256", sign, data)));
    clearInterval(timer);
    // 24 RSA-2048 signatures take ~15 ms of CPU; signed in the caller's thread the timer could not fire meanwhile.
    expect(ticks).toBeGreaterThan(0);
  });
});
