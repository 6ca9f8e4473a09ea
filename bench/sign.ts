/**
 * signJwt beside raw node:crypto `sign()` of the same bytes, per algorithm,
 * on keys loaded the way a server loads them (pemKeys / hmacKeys): the
 * issuance code's own cost over the signature, without HTTP, in calls per
 * second of CPU time. Three rounds,
 * the two measured back to back in each (so the machine's load falls on
 * both); prints each round's ratio and the median.
 *
 *   npx tsx bench/sign.ts [seconds-per-case] [rounds]
 *   RK_BENCH_LIB=$PWD/bench/.dist npx tsx bench/sign.ts   # a tsup build instead of the sources
 *   node --experimental-strip-types … / bun bench/sign.ts also run it (without
 *   node:crypto the raw column is skipped).
 *
 * Not a timed test; figures go to docs/performance.md.
 */
import type * as AuthModule from "../src/auth/index.js";
import type { JwsAlgorithm, SigningKey } from "../src/auth/index.js";

// RK_BENCH_LIB=<dir>: a tsup build (as bench/run.ts and bench/compare.ts make), else the sources.
const lib = typeof process !== "undefined" ? process.env.RK_BENCH_LIB : undefined;
const { generateSigningKeyPem, hmacKeys, pemKeys, signJwt } = (await import(lib ? `${lib}/auth/index.js` : "../src/auth/index.js")) as typeof AuthModule;

const SECONDS = Number(process.argv[2] ?? 1);
const ROUNDS = Number(process.argv[3] ?? 3);

/**
 * Calls per second of the process's CPU time (every thread: RSA signs on the
 * thread pool), not of the wall clock: on a shared machine the wall-clock rate
 * moves with other work, the CPU a call costs much less.
 */
async function rate(run: () => unknown): Promise<number> {
  for (let i = 0; i < 50; i++) await run(); // warm-up
  const cpu0 = cpuSeconds();
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  while (performance.now() < end) {
    await run();
    n++;
  }
  return n / (cpuSeconds() - cpu0);
}

function cpuSeconds(): number {
  if (typeof process === "undefined" || typeof process.cpuUsage !== "function") return performance.now() / 1000;
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

type NodeCrypto = typeof import("node:crypto");
const nodeCrypto: NodeCrypto | undefined = await import("node:crypto").catch(() => undefined);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const fmt = (x: number): string => Math.round(x).toLocaleString("en-US").padStart(8);

const claims = { iss: "bench", sub: "alice", aud: "registry.bench", exp: 2_000_000_000, access: [{ type: "repository", name: "alice/app", actions: ["pull"] }] };
const runtime = typeof process !== "undefined" && process.versions ? `node ${process.versions.node}` : "unknown";
console.log(`${runtime}, ${SECONDS}s per case, ${ROUNDS} rounds, one call at a time, calls per CPU second`);

for (const alg of ["RS256", "PS256", "ES256", "EdDSA", "HS256"] as JwsAlgorithm[]) {
  let key: SigningKey;
  let raw: (() => unknown) | undefined;
  const token = (k: SigningKey): Promise<string> => signJwt(claims, k, { x5c: false });
  if (alg === "HS256") {
    const secret = "0123456789abcdef0123456789abcdef-bench";
    key = await hmacKeys({ secret }).signingKey();
    const input = Buffer.from((await token(key)).split(".").slice(0, 2).join("."));
    if (nodeCrypto) raw = () => nodeCrypto.createHmac("sha256", secret).update(input).digest();
  } else {
    const pem = await generateSigningKeyPem({ alg: alg as Exclude<JwsAlgorithm, "HS256"> });
    key = await pemKeys({ ...pem, alg }).signingKey();
    const input = Buffer.from((await token(key)).split(".").slice(0, 2).join("."));
    if (nodeCrypto) {
      const priv = nodeCrypto.createPrivateKey(pem.privateKey);
      const hash = alg === "EdDSA" ? null : "sha256";
      const opts = alg === "ES256" ? { dsaEncoding: "ieee-p1363" as const } : alg === "PS256" ? { padding: nodeCrypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : {};
      raw = () => nodeCrypto.sign(hash, input, { key: priv, ...opts });
    }
  }
  const ratios: number[] = [];
  const line: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = await rate(() => token(key));
    const b = raw ? await rate(raw) : NaN;
    ratios.push(a / b);
    line.push(`signJwt ${fmt(a)}/s raw ${fmt(b)}/s (${(a / b).toFixed(2)}×)`);
  }
  console.log(`${alg.padEnd(6)} ${line.join(" | ")}   median ${median(ratios).toFixed(2)}×`);
}
