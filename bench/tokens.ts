/**
 * Token issue and verify rates: registry-kit (WebCrypto) beside raw
 * node:crypto sign/verify of the same bytes, and the cached-verify rate of
 * the registry authorizer.
 *
 *   npx tsx bench/tokens.ts [seconds-per-case]
 *
 * Not a timed test; figures go to docs/performance.md.
 */
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify } from "node:crypto";
import {
  createTokenAuthorizer,
  createTokenService,
  createTokenVerifier,
  generatedKeys,
  memoryCredentials,
  signJwt,
  type JwsAlgorithm,
} from "../src/auth/index.js";

const SECONDS = Number(process.argv[2] ?? 1);
const CONCURRENCY = 32;

async function rate(run: () => Promise<unknown> | unknown, concurrent = CONCURRENCY): Promise<number> {
  for (let i = 0; i < 50; i++) await run(); // warm-up
  const end = performance.now() + SECONDS * 1000;
  const start = performance.now();
  let n = 0;
  while (performance.now() < end) {
    if (concurrent > 1) {
      await Promise.all(Array.from({ length: concurrent }, run));
      n += concurrent;
    } else {
      await run();
      n++;
    }
  }
  return n / ((performance.now() - start) / 1000);
}

function syncRate(run: () => unknown): number {
  for (let i = 0; i < 50; i++) run();
  const end = performance.now() + SECONDS * 1000;
  const start = performance.now();
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 16; i++) run();
    n += 16;
  }
  return n / ((performance.now() - start) / 1000);
}

const fmt = (r: number) => `${Math.round(r).toLocaleString("en-US").padStart(11)} ops/s`;
const rows: [string, number][] = [];
const row = (name: string, r: number) => {
  rows.push([name, r]);
  console.log(`${name.padEnd(52)} ${fmt(r)}`);
};

const ISSUER = "bench-issuer";
const SERVICE = "registry.bench";
const claims = () => {
  const iat = Math.floor(Date.now() / 1000);
  return { iss: ISSUER, sub: "alice", aud: SERVICE, exp: iat + 3600, nbf: iat, iat, jti: "bench", access: [{ type: "repository", name: "alice/app", actions: ["pull", "push"] }] };
};

console.log(`node ${process.version}, ${SECONDS}s per case, WebCrypto cases run ${CONCURRENCY} concurrent\n`);

for (const alg of ["RS256", "ES256"] as JwsAlgorithm[]) {
  const keys = generatedKeys({ alg: alg as "RS256" | "ES256" });
  const pem = await keys.exportPem();
  const sk = await keys.signingKey();
  const token = await signJwt(claims(), sk, { x5c: false });
  const x5cToken = await signJwt(claims(), sk);
  const [h, p, s] = token.split(".") as [string, string, string];
  const input = Buffer.from(`${h}.${p}`);
  const sig = Buffer.from(s, "base64url");
  const priv = createPrivateKey(pem.privateKey);
  const pub = createPublicKey(pem.certificate);
  const nodeOpts = alg === "ES256" ? { dsaEncoding: "ieee-p1363" as const } : {};

  row(`${alg} issue: signJwt (WebCrypto)`, await rate(() => signJwt(claims(), sk, { x5c: false })));
  row(`${alg} issue: signJwt, sequential`, await rate(() => signJwt(claims(), sk, { x5c: false }), 1));
  row(`${alg} raw node:crypto sign of the same bytes`, syncRate(() => nodeSign("sha256", input, { key: priv, ...nodeOpts })));

  const uncached = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, rootCertBundle: pem.certificate, cacheSize: 0 });
  row(`${alg} verify, uncached, kid`, await rate(() => uncached.verify(token)));
  row(`${alg} verify, uncached, x5c`, await rate(() => uncached.verify(x5cToken)));
  row(`${alg} verify, uncached, kid, sequential`, await rate(() => uncached.verify(token), 1));
  row(`${alg} raw node:crypto verify of the same bytes`, syncRate(() => nodeVerify("sha256", input, { key: pub, ...nodeOpts }, sig)));

  const svc = createTokenService({ issuer: ISSUER, service: SERVICE, keys, checkCredentials: memoryCredentials({ alice: { password: "pw" } }) });
  const auth = `Basic ${btoa("alice:pw")}`;
  row(
    `${alg} token service GET (Basic, 1 scope), end to end`,
    await rate(() => svc(new Request(`http://t/token?service=${SERVICE}&scope=repository:alice/app:pull,push`, { headers: { authorization: auth } }))),
  );
  console.log();
}

{
  const keys = generatedKeys();
  const pem = await keys.exportPem();
  const token = await signJwt(claims(), await keys.signingKey());
  const verifier = createTokenVerifier({ issuer: ISSUER, audience: SERVICE, rootCertBundle: pem.certificate });
  await verifier.verify(token);
  row("cached verify (verifier.verify, hit)", await rate(() => verifier.verify(token), 1));
  const authorize = createTokenAuthorizer({ realm: "http://t/token", service: SERVICE, issuer: ISSUER, rootCertBundle: pem.certificate });
  const needed = [{ type: "repository", name: "alice/app", actions: ["pull", "push"] }];
  const request = new Request("http://r/v2/alice/app/blobs/uploads/", { method: "POST", headers: { authorization: `Bearer ${token}` } });
  if ((await authorize(request, needed)) !== undefined) throw new Error("bench token refused");
  row("cached authorize (authorizer, hit, incl. header read)", await rate(() => authorize(request, needed), 1));
}
