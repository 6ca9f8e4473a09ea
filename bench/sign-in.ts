/**
 * Sign-in timing seen from outside: the token endpoint's answer time for a
 * known user with a wrong password beside an unknown user, both 401. They
 * should be the same (test/users/sign-in-work.test.ts counts the work); this
 * measures what a remote client would time.
 *
 *   npx tsx bench/sign-in.ts [pairs=60] [concurrency=1]
 *
 * The server is its own child process, composed as the all-in-one server
 * composes its token service: `storageUserStore` on `fsStorage` in a temporary
 * directory, `storeCredentialCheck` with the default scrypt cost, served by
 * `serve` from registry-kit/node. The client sends the two kinds in pairs, one
 * after the other in random order; with `concurrency` above 1, that many pairs
 * run side by side (requests overlap, as under load). It prints the median,
 * 10th and 90th percentile of each kind.
 *
 * Not a timed test; figures go to docs/security.md.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ADMIN = { username: "admin", password: "Adm1n-Password" };
const SERVICE = "registry-kit";

async function runServer(dir: string): Promise<void> {
  const { createTokenService, generatedKeys } = await import("../src/auth/index.js");
  const { serve } = await import("../src/node/index.js");
  const { fsStorage } = await import("../src/storage/fs/index.js");
  const { bootstrapAdmin, storageUserStore, storeCredentialCheck } = await import("../src/users/index.js");
  const users = storageUserStore(fsStorage({ root: dir }));
  await bootstrapAdmin(users, ADMIN);
  const tokens = createTokenService({ issuer: SERVICE, service: SERVICE, keys: generatedKeys(), checkCredentials: storeCredentialCheck(users) });
  const server = await serve(tokens, { port: 0 });
  console.log(`listening ${server.url}`);
  process.stdin.resume();
  process.stdin.on("end", () => void server.close().then(() => process.exit(0)));
}

async function startServer(dir: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--server", dir], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const match = /^listening (\S+)$/.exec(line);
    if (match?.[1]) return { url: match[1], stop: () => child.stdin!.end() };
  }
  throw new Error("the server exited before listening");
}

async function timeRequest(url: string, username: string): Promise<number> {
  const authorization = `Basic ${Buffer.from(`${username}:Wr0ng-Password`).toString("base64")}`;
  const start = performance.now();
  const res = await fetch(`${url}/?service=${SERVICE}`, { headers: { authorization } });
  await res.arrayBuffer();
  const ms = performance.now() - start;
  if (res.status !== 401) throw new Error(`expected 401 for ${username}, got ${res.status}`);
  return ms;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const pairs = Number(process.argv[2] ?? 60);
  const concurrency = Number(process.argv[3] ?? 1);
  const dir = await mkdtemp(path.join(tmpdir(), "rk-sign-in-"));
  const server = await startServer(dir);
  const times: Record<"known" | "unknown", number[]> = { known: [], unknown: [] };
  try {
    for (let i = 0; i < 4; i++) for (const name of [ADMIN.username, "nobody"]) await timeRequest(server.url, name); // warm-up
    const onePair = async () => {
      const order = Math.random() < 0.5 ? (["known", "unknown"] as const) : (["unknown", "known"] as const);
      for (const kind of order) times[kind].push(await timeRequest(server.url, kind === "known" ? ADMIN.username : "nobody"));
    };
    for (let done = 0; done < pairs; done += concurrency) {
      await Promise.all(Array.from({ length: Math.min(concurrency, pairs - done) }, onePair));
    }
  } finally {
    server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`${pairs} pairs, ${concurrency} pairs at a time, token endpoint over HTTP, 401 each`);
  for (const kind of ["known", "unknown"] as const) {
    const sorted = [...times[kind]].sort((a, b) => a - b);
    const label = kind === "known" ? "known user, wrong password" : "unknown user";
    console.log(`${label.padEnd(28)} median ${percentile(sorted, 50).toFixed(1)} ms  p10 ${percentile(sorted, 10).toFixed(1)}  p90 ${percentile(sorted, 90).toFixed(1)}`);
  }
}

if (process.argv[2] === "--server") await runServer(process.argv[3]!);
else await main();
