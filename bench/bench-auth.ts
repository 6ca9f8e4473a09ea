/**
 * What both benchmark scripts (run.ts, compare.ts) need to talk to a registry
 * behind token auth without a token service: one RSA key whose certificate the
 * registries trust, and one long-lived token for the repositories measured.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateSigningKeyPem, pemKeys, signJwt, type KeyPem } from "../src/auth/index.js";

/** The `service` (audience) of the bench tokens. */
export const SERVICE = "registry.bench";
/** Their issuer. */
export const ISSUER = "registry-kit-bench";

/** The key, the path of its certificate (`rootcertbundle`), and a bearer token with every action on `repositories`. */
export interface BenchAuth {
  keyPem: KeyPem;
  certPath: string;
  token: string;
  /** `{ authorization: "Bearer …" }`. */
  headers: { authorization: string };
}

/** Make the key (its certificate written into `dir`) and a token valid for a day. */
export async function benchAuth(dir: string, repositories: readonly string[]): Promise<BenchAuth> {
  const keyPem = await generateSigningKeyPem({ alg: "RS256" });
  const certPath = join(dir, "rootcert.pem");
  writeFileSync(certPath, keyPem.certificate);
  const signer = await pemKeys({ privateKey: keyPem.privateKey, certificate: keyPem.certificate }).signingKey();
  const iat = Math.floor(Date.now() / 1000);
  const token = await signJwt(
    { iss: ISSUER, sub: "bench", aud: SERVICE, iat, nbf: iat - 60, exp: iat + 24 * 3600, jti: randomBytes(8).toString("hex"), access: repositories.map((name) => ({ type: "repository", name, actions: ["*"] })) },
    signer,
    { x5c: false },
  );
  return { keyPem, certPath, token, headers: { authorization: `Bearer ${token}` } };
}
