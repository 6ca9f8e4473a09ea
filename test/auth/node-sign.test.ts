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
      const sig = nodeSign(alg, sign, data);
      expect(sig).toBeInstanceOf(Uint8Array);
      expect(await crypto.subtle.verify(algorithmSpec(alg)!.signParams, verify, sig as Uint8Array<ArrayBuffer>, data)).toBe(true);
    });
  }

  it("declines a public key (the caller falls back to WebCrypto, which refuses it)", async () => {
    const { verify } = await pair("ES256");
    expect(nodeSign("ES256", verify, data)).toBeUndefined();
  });
});
