/**
 * Issue 41, item 1 on every runtime: a registry with a pull-through cache
 * served by Node 22 and 24 (`serve`), Bun (`Bun.serve`), Deno (`Deno.serve`)
 * and workerd (miniflare) runs test/runtime/pull-through-server.ts (or
 * pull-through-worker.ts, bundled by esbuild), its upstream a malicious
 * node:http server in this process (test/adapters/corrupt-upstream.ts). curl,
 * as a script runs it, must never get a successful 200 with the whole body
 * for a blob whose upstream bytes do not match: for a same-length and a
 * different-length mismatch, one chunk and many, with and without a
 * `Content-Length`. A matching blob arrives whole. The binaries are the ones
 * `scripts/runtimes.mjs` fetches.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, corruptUpstream, flipped, sha256, type CorruptUpstream } from "../adapters/corrupt-upstream.js";
import { tempDir } from "./helpers/process.js";

const ROOT = resolve(import.meta.dirname, "../..");
const RUN_TS: Record<string, string[]> = { "node@22": ["--import", "tsx"], "node@24": ["--import", "tsx"], bun: [], deno: ["--sloppy-imports"], workerd: [] };

function binaries(): Record<string, string[]> {
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/runtimes.mjs"), "paths"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`scripts/runtimes.mjs paths failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, string[]>;
}

function start(command: string[], env: Record<string, string>): Promise<{ url: string; child: ChildProcess; log: () => string }> {
  const [bin, ...args] = command as [string, ...string[]];
  const child = spawn(bin, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolvePromise, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolvePromise({ url: m[1]!, child, log: () => out });
    });
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) => reject(new Error(`${bin} exited (${code}) before listening:\n${out}`)));
    child.once("error", reject);
  });
}

/** curl without `-f`, as a script runs it: exit status, HTTP status, the bytes it kept. */
function curl(url: string, out: string): Promise<{ exit: number; status: number; bytes: number }> {
  return new Promise((resolvePromise) => {
    execFile("curl", ["-sS", "-o", out, "-w", "%{http_code}", url], (error, stdout) => {
      let bytes = 0;
      try {
        bytes = readFileSync(out).byteLength;
      } catch {
        // nothing written
      }
      resolvePromise({ exit: error ? Number((error as { code?: number }).code ?? 1) : 0, status: Number(stdout.trim() || 0), bytes });
    });
  });
}

const SMALL = 1000;
const LARGE = 3 * 1024 * 1024 + 123;
const CASES: { name: string; size: number; corrupt: (b: Uint8Array) => Uint8Array; chunked?: boolean }[] = [
  { name: "small, same length", size: SMALL, corrupt: (b) => flipped(b, 10) },
  { name: "small, shorter", size: SMALL, corrupt: (b) => b.slice(0, SMALL - 100) },
  { name: "large, same length", size: LARGE, corrupt: (b) => flipped(b) },
  { name: "large, shorter", size: LARGE, corrupt: (b) => b.slice(0, LARGE - 70_000) },
  { name: "large, longer", size: LARGE, corrupt: (b) => new Uint8Array([...b, ...new Uint8Array(5000)]) },
  { name: "large, same length, chunked", size: LARGE, corrupt: (b) => flipped(b), chunked: true },
];

describe("pull-through on each runtime: a corrupt upstream blob never reaches curl whole", () => {
  const runtimes = binaries();
  const work = tempDir("runtimes-pull-through");
  const bundle = join(work.path, "worker.mjs");
  let upstream: CorruptUpstream;

  beforeAll(async () => {
    upstream = await corruptUpstream();
    await build({
      bundle: true,
      format: "esm",
      platform: "neutral",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["module", "main"],
      external: ["node:*", "crypto"],
      logLevel: "silent",
      entryPoints: [join(ROOT, "test/runtime/pull-through-worker.ts")],
      outfile: bundle,
    });
  });
  afterAll(async () => {
    await upstream?.close();
    work.remove();
  });

  for (const id of Object.keys(RUN_TS)) {
    it(`${id}: every mismatch is a 502 or a cut transfer; a matching blob arrives whole`, async () => {
      const server =
        id === "workerd"
          ? await start([runtimes["node@24"]![0]!, join(ROOT, "test/runtime/miniflare.mjs"), bundle], { RK_BINDINGS: JSON.stringify({ RK_UPSTREAM: upstream.url }) })
          : await start([...runtimes[id]!, ...RUN_TS[id]!, join(ROOT, "test/runtime/pull-through-server.ts")], { RK_UPSTREAM: upstream.url });
      try {
        const outcomes: string[] = [];
        for (const c of CASES) {
          const real = blob(c.size);
          upstream.blobs.set(real.digest, { bytes: c.corrupt(real.bytes), chunked: c.chunked });
          const got = await curl(`${server.url}/v2/lib/app/blobs/${real.digest}`, join(work.path, "body"));
          outcomes.push(`${c.name}: ${got.status} exit ${got.exit}, ${got.bytes} bytes`);
          const what = `${id}, ${c.name}: ${JSON.stringify(got)}\n${server.log()}`;
          expect({ exit: got.exit, status: got.status }, what).not.toEqual({ exit: 0, status: 200 });
          if (got.status === 200) expect(got.bytes, what).toBeLessThan(c.corrupt(real.bytes).byteLength);
          // 502: judged before the answer; 0: no answer at all (Node's adapter reads a small body whole first).
          else expect([0, 502], what).toContain(got.status);
        }
        console.log(`[runtimes-pull-through] ${id}: ${outcomes.join("; ")}`);
        for (const chunked of [false, true]) {
          const good = blob(LARGE);
          upstream.blobs.set(good.digest, { bytes: good.bytes, chunked });
          const out = join(work.path, "good");
          const got = await curl(`${server.url}/v2/lib/ok/blobs/${good.digest}`, out);
          expect(got, server.log()).toEqual({ exit: 0, status: 200, bytes: LARGE });
          expect(sha256(new Uint8Array(readFileSync(out)))).toBe(good.digest);
        }
      } finally {
        server.child.kill("SIGTERM");
      }
    });
  }
});
