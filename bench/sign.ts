/**
 * signJwt rates per algorithm on keys loaded the way a server loads them
 * (pemKeys / hmacKeys), to compare the node:crypto signing path before and
 * after a change to src/auth/node-sign.ts.
 *
 *   npx tsx bench/sign.ts [seconds-per-case]
 *   node --experimental-strip-types … / bun bench/sign.ts also run it.
 *
 * Not a timed test; figures go to the change's notes.
 */
import { generateSigningKeyPem, hmacKeys, pemKeys, signJwt, type JwsAlgorithm, type SigningKey } from "../src/auth/index.js";

const SECONDS = Number(process.argv[2] ?? 1);

async function rate(run: () => Promise<unknown>, concurrent: number): Promise<number> {
  for (let i = 0; i < 50; i++) await run(); // warm-up
  const start = performance.now();
  const end = start + SECONDS * 1000;
  let n = 0;
  while (performance.now() < end) {
    await Promise.all(Array.from({ length: concurrent }, run));
    n += concurrent;
  }
  return n / ((performance.now() - start) / 1000);
}

const claims = { iss: "bench", sub: "alice", aud: "registry.bench", exp: 2_000_000_000, access: [{ type: "repository", name: "alice/app", actions: ["pull"] }] };
const runtime = typeof process !== "undefined" && process.versions ? `node ${process.versions.node}` : "unknown";
console.log(`${runtime}, ${SECONDS}s per case`);

for (const alg of ["RS256", "PS256", "ES256", "EdDSA", "HS256"] as JwsAlgorithm[]) {
  let key: SigningKey;
  if (alg === "HS256") key = await hmacKeys({ secret: "0123456789abcdef0123456789abcdef-bench" }).signingKey();
  else key = await pemKeys({ ...(await generateSigningKeyPem({ alg: alg as Exclude<JwsAlgorithm, "HS256"> })), alg }).signingKey();
  const sign = () => signJwt(claims, key, { x5c: false });
  const seq = await rate(sign, 1);
  const conc = await rate(sign, 32);
  console.log(`${alg.padEnd(6)} signJwt sequential ${Math.round(seq).toLocaleString("en-US").padStart(9)} /s   32 concurrent ${Math.round(conc).toLocaleString("en-US").padStart(9)} /s`);
}
