/** Token issuance against raw node:crypto signing (bench/run.ts). */
import { createPrivateKey, sign as nodeSign } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { generateSigningKeyPem, type JwsAlgorithm } from "../../src/auth/index.js";
import { ISSUER, SERVICE } from "../bench-auth.js";
import { cpuOf, freePort, startServer, wrk } from "../proc.js";
import { LIB, QUICK, ROOT, TOKEN_SECONDS, WRK_SECONDS, log, median, metrics, round, startHello, tools, work, keyPem, NODE_FLAGS, SERVER_SCRIPT } from "./context.js";

// ---------------------------------------------------------------- tokens
export async function rateConcurrent(fn: () => Promise<unknown>, seconds: number, concurrency: number): Promise<number> {
  await Promise.all(Array.from({ length: concurrency }, fn));
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let n = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await fn();
      n++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return n / ((performance.now() - t0) / 1000);
}

export function syncRate(fn: () => unknown, seconds: number): number {
  for (let i = 0; i < 20; i++) fn();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    fn();
    n++;
  }
  return n / ((performance.now() - t0) / 1000);
}

/** Concurrent token requests in the issuance measurement (wrk connections, async signs in flight). */
export const TOKEN_CONCURRENCY = 16;

/**
 * Token issuance as deployed: the token service served by registry-kit/node
 * in its own process, asked by wrk over loopback (anonymous GET, one scope),
 * against raw node:crypto signing of the same bytes in this process: the
 * plain synchronous `sign()` on one thread, and 16 callback `sign()`s in
 * flight on the thread pool (every core, no HTTP).
 */
export async function measureTokens(): Promise<void> {
  log("== token issuance (the token service over HTTP; Distribution has no token service)");
  // signJwt of the library under test (the build, as the servers run it), for the in-process ratio.
  const lib = (LIB ? await import(pathToFileURL(join(LIB, "auth", "index.js")).href) : await import("../../src/auth/index.js")) as typeof import("../../src/auth/index.js");
  // The HTTP part of a token's cost: bare node:http under the same wrk flags as the token service.
  const hello = await startHello();
  let helloRate: number;
  try {
    await wrk(tools.wrk!, `${hello.url}/token`, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: 1 });
    helloRate = (await wrk(tools.wrk!, `${hello.url}/token`, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: WRK_SECONDS })).requestsPerSec;
  } finally {
    await hello.stop();
  }
  log(`  bare node:http, wrk -t1 -c${TOKEN_CONCURRENCY}: ${Math.round(helloRate)} req/s`);
  for (const alg of ["RS256", "ES256", "EdDSA"] as Array<Exclude<JwsAlgorithm, "HS256">>) {
    const pem = alg === "RS256" ? keyPem : await generateSigningKeyPem({ alg });
    const dir = join(work, `tokens-${alg}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "key.pem"), pem.privateKey);
    writeFileSync(join(dir, "cert.pem"), pem.certificate);
    const port = await freePort();
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ port, tokens: { service: SERVICE, issuer: ISSUER, privateKey: join(dir, "key.pem"), certificate: join(dir, "cert.pem") } }));
    const server = await startServer(`token service ${alg}`, process.execPath, [...NODE_FLAGS, ...SERVER_SCRIPT, config], `http://127.0.0.1:${port}`, async (u) => (await fetch(`${u}/token`)).ok, {
      cwd: ROOT,
      env: LIB ? { RK_BENCH_LIB: LIB } : {},
    });
    try {
      const url = `${server.url}/token?service=${SERVICE}&scope=repository:bench/app:pull`;
      // the same bytes the service signs: a fresh token's signing input
      const sample = (await (await fetch(url)).json()) as { token?: string };
      if (!sample.token) throw new Error(`token service refused: ${JSON.stringify(sample)}`);
      const input = Buffer.from(sample.token.slice(0, sample.token.lastIndexOf(".")));
      const priv = createPrivateKey(pem.privateKey);
      const opts = alg === "ES256" ? { dsaEncoding: "ieee-p1363" as const } : {};
      const hash = alg === "EdDSA" ? null : "sha256";
      const rawSync = syncRate(() => nodeSign(hash, input, { key: priv, ...opts }), TOKEN_SECONDS);
      const syncSign = (): unknown => nodeSign(hash, input, { key: priv, ...opts });
      const callbackSign = (): Promise<void> => new Promise<void>((res, rej) => nodeSign(hash, input, { key: priv, ...opts }, (e) => (e ? rej(e) : res())));
      // signJwt signs RSA as node:crypto's callback form does, on the thread pool (so that a 2048-bit signature,
      // ~0.2 ms, does not hold the event loop), and EC/EdDSA in the caller's thread: its own cost is measured
      // against the same form of raw sign(). The thread pool's hop costs RSA CPU whoever calls it; the synchronous
      // comparison is kept beside it.
      const inProcess = await signJwtVsRaw(lib, pem, alg, alg === "RS256" ? callbackSign : syncSign);
      const againstSync = alg === "RS256" ? await signJwtVsRaw(lib, pem, alg, syncSign) : undefined;
      const rawAsync = await rateConcurrent(
        () => new Promise<void>((res, rej) => nodeSign(hash, input, { key: priv, ...opts }, (e) => (e ? rej(e) : res()))),
        TOKEN_SECONDS,
        TOKEN_CONCURRENCY,
      );
      await wrk(tools.wrk!, url, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: 1 });
      const rates: number[] = [];
      const cpus: number[] = [];
      for (let rep = 0; rep < (QUICK ? 1 : 3); rep++) {
        const cpu0 = cpuOf(server.pid);
        const r = await wrk(tools.wrk!, url, { threads: 1, connections: TOKEN_CONCURRENCY, seconds: WRK_SECONDS });
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`token service ${alg}: ${r.non2xx} non-2xx answers, ${r.errors} socket errors`);
        rates.push(r.requestsPerSec);
        cpus.push(((cpuOf(server.pid) - cpu0) / Math.max(1, r.requests)) * 1e6);
      }
      const one = await wrk(tools.wrk!, url, { threads: 1, connections: 1, seconds: QUICK ? 1 : 3 });
      const svc = median(rates);
      const cpu = median(cpus);
      const form = alg === "RS256" ? "callback" : "synchronous";
      log(`  ${alg}: signJwt in process ${inProcess.ratios.map((r) => `${r}×`).join(", ")} raw ${form} sign() per CPU second (${inProcess.cpu.map((c) => `${c} µs`).join(", ")} a token)${againstSync ? `; ${againstSync.ratios.map((r) => `${r}×`).join(", ")} the synchronous sign()` : ""}`);
      metrics.push({
        id: `tokens.${alg}.in-process`,
        group: "tokens",
        label: `${alg} signJwt in process, per CPU second, against raw node:crypto sign() (${form})`,
        unit: "×",
        higherIsBetter: true,
        rk: median(inProcess.ratios),
        samples: { rk: inProcess.ratios },
        target: "≥ 0.90 × raw node:crypto sign",
        met: median(inProcess.ratios) >= 0.9,
        note: `signJwt ${inProcess.cpu.join(" / ")} µs of CPU a token, raw ${form} sign() ${inProcess.rawCpu.join(" / ")} µs, in ${inProcess.ratios.length} rounds of alternated ~25 ms batches (RSA: the pool thread's CPU counted)${againstSync ? `; against the synchronous sign() in the caller's thread (${againstSync.rawCpu.join(" / ")} µs): ${againstSync.ratios.join(" / ")}×, the thread pool's hop` : ""}`,
      });
      log(`  ${alg}: token service ${Math.round(svc)}/s (${TOKEN_CONCURRENCY} connections, server CPU ${Math.round(cpu)} µs/token; one connection ${Math.round(one.requestsPerSec)}/s) vs raw node:crypto sign ${Math.round(rawSync)}/s on one thread, ${Math.round(rawAsync)}/s ${TOKEN_CONCURRENCY} in flight on the thread pool`);
      metrics.push({
        id: `tokens.${alg}`,
        group: "tokens",
        label: `${alg} token issuance, token service over HTTP (anonymous GET, 1 scope, ${TOKEN_CONCURRENCY} connections)`,
        unit: "tokens/s",
        higherIsBetter: true,
        rk: round(svc, 0),
        ratio: round(svc / rawSync, 2),
        samples: { rk: rates.map((x) => round(x, 0)) },
        target: alg === "RS256" ? "≥ 0.90 × raw node:crypto sign" : undefined,
        met: alg === "RS256" ? svc / rawSync >= 0.9 : undefined,
        // Over HTTP a token costs its signature plus a whole request: for a signature of tens of µs the
        // request is most of it, so the bound is the bare node:http rate combined with the signing rate.
        note: `ratio against node:crypto sign() on one thread (${Math.round(rawSync)}/s); one event loop that answers bare node:http at ${Math.round(helloRate)}/s and signs in its own thread tops out at ${Math.round(1 / (1 / helloRate + 1 / rawSync))}/s (${round(1 / (1 / helloRate + 1 / rawSync) / rawSync, 2)}× raw), the service reaches ${round((svc * (1 / helloRate + 1 / rawSync)) * 100, 0)} % of that; against ${TOKEN_CONCURRENCY} callback sign()s in flight on the thread pool, every core, no HTTP (${Math.round(rawAsync)}/s): ${round(svc / rawAsync, 2)}×; server CPU ${Math.round(cpu)} µs per token; one connection at a time: ${Math.round(one.requestsPerSec)}/s (${round(one.requestsPerSec / rawSync, 2)}×)`,
      });
    } finally {
      await server.stop();
    }
  }
  log("");
}

/**
 * The issuance code's own cost over the signature: signJwt of the library
 * under test against raw node:crypto `sign()` of the same bytes, one call at a
 * time, in calls per second of this process's CPU (every thread, so RSA's pool
 * signs count), in 3 rounds of alternated ~25 ms batches so that the machine's
 * load falls on both alike (3 s runs back to back swung 0.67-1.03 between the
 * rounds of one run).
 */
export async function signJwtVsRaw(
  lib: typeof import("../../src/auth/index.js"),
  pem: { privateKey: string; certificate: string },
  alg: Exclude<JwsAlgorithm, "HS256">,
  raw: () => unknown,
): Promise<{ ratios: number[]; cpu: number[]; rawCpu: number[] }> {
  const key = await lib.pemKeys({ ...pem, alg }).signingKey();
  const claims = { iss: ISSUER, sub: "", aud: SERVICE, exp: 2_000_000_000, nbf: 0, iat: 0, jti: "0123456789abcdefghijkl", access: [{ type: "repository", name: "bench/app", actions: ["pull"] }] };
  const cpuNow = (): number => {
    const c = process.cpuUsage();
    return c.user + c.system;
  };
  /** CPU µs of `n` calls of `fn`, one at a time. */
  const batch = async (fn: () => unknown, n: number): Promise<number> => {
    const c0 = cpuNow();
    for (let i = 0; i < n; i++) await fn();
    return cpuNow() - c0;
  };
  const sign = () => lib.signJwt(claims, key, { x5c: false });
  for (let i = 0; i < 50; i++) {
    await sign();
    await raw();
  }
  // Calls per ~25 ms batch: the two alternate in short batches, so that what the machine does meanwhile
  // (the other tenants, a collection of the bench's own heap) falls on both alike.
  const perCall = (await batch(raw, 20)) / 20;
  const n = Math.max(1, Math.round(25_000 / Math.max(1, perCall)));
  const out = { ratios: [] as number[], cpu: [] as number[], rawCpu: [] as number[] };
  for (let r = 0; r < 3; r++) {
    let a = 0;
    let b = 0;
    let calls = 0;
    const end = performance.now() + TOKEN_SECONDS * 2000;
    while (performance.now() < end) {
      a += await batch(sign, n);
      b += await batch(raw, n);
      calls += n;
    }
    out.ratios.push(round(b / a, 2));
    out.cpu.push(round(a / calls, 1));
    out.rawCpu.push(round(b / calls, 1));
  }
  return out;
}
