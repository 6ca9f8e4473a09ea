/**
 * Issue 41, item 1: a blob pulled through the cache whose upstream bytes do
 * not hash to the digest asked for must never reach a client as a complete
 * body. The registry runs behind registry-kit/node's `serve()`, its upstream
 * is a malicious node:http server (corrupt-upstream.ts), and the clients are
 * curl (a child process, trusting `Docker-Content-Digest` as scripts do) and
 * fetch: for a same-length and a different-length mismatch, small (one
 * chunk) and large (many chunks), with and without a `Content-Length`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registryUpstream } from "../../src/client/index.js";
import { serve, type RunningServer } from "../../src/node/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { blob, corruptUpstream, flipped, sha256, type CorruptUpstream } from "./corrupt-upstream.js";

interface CurlResult {
  exit: number;
  status: number;
  bytes: Uint8Array;
}

/** curl as a script would run it: no `-f`, the body kept whatever happens. */
function curl(url: string, dir: string): Promise<CurlResult> {
  const out = join(dir, `body-${Math.random().toString(36).slice(2)}`);
  return new Promise((resolve) => {
    execFile("curl", ["-sS", "-o", out, "-w", "%{http_code}", url], (error, stdout) => {
      let bytes = new Uint8Array(0);
      try {
        bytes = new Uint8Array(readFileSync(out));
      } catch {
        // nothing written
      }
      resolve({ exit: error ? Number((error as { code?: number }).code ?? 1) : 0, status: Number(stdout.trim() || 0), bytes });
    });
  });
}

/** fetch, reading the body to its end: the bytes, or the error that cut it (status 0: no response at all). */
async function fetched(url: string): Promise<{ status: number; bytes?: Uint8Array; error?: unknown }> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    return { status: 0, error };
  }
  try {
    return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) };
  } catch (error) {
    return { status: response.status, error };
  }
}

const SMALL = 1000;
const LARGE = 3 * 1024 * 1024 + 123;

const CASES: { name: string; size: number; corrupt: (b: Uint8Array) => Uint8Array; chunked?: boolean }[] = [
  { name: "small, same length", size: SMALL, corrupt: (b) => flipped(b, 10) },
  { name: "small, shorter", size: SMALL, corrupt: (b) => b.slice(0, SMALL - 100) },
  { name: "small, longer", size: SMALL, corrupt: (b) => new Uint8Array([...b, 1, 2, 3]) },
  { name: "large, same length, last byte changed", size: LARGE, corrupt: (b) => flipped(b) },
  { name: "large, same length, first byte changed", size: LARGE, corrupt: (b) => flipped(b, 0) },
  { name: "large, shorter", size: LARGE, corrupt: (b) => b.slice(0, LARGE - 70_000) },
  { name: "large, longer", size: LARGE, corrupt: (b) => new Uint8Array([...b, ...new Uint8Array(5000)]) },
  { name: "large, same length, chunked (no Content-Length)", size: LARGE, corrupt: (b) => flipped(b), chunked: true },
  { name: "small, same length, chunked (no Content-Length)", size: SMALL, corrupt: (b) => flipped(b), chunked: true },
];

describe("pull-through over serve(): corrupt upstream blobs never reach a client whole", () => {
  let upstream: CorruptUpstream;
  let server: RunningServer;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    upstream = await corruptUpstream();
    const registry = createRegistry({
      storage: memoryStorage(),
      uploadSecret: "verify-secret",
      pullThrough: { upstreams: [{ prefix: "", upstream: registryUpstream({ url: upstream.url }) }] },
      log: () => {},
    });
    server = await serve(registry, { host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${server.port}`;
    dir = mkdtempSync(join(tmpdir(), "pt-verify-"));
  });
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const c of CASES) {
    it(`${c.name}: curl and fetch see a refusal or a cut transfer, and nothing is stored`, async () => {
      for (const client of ["curl", "fetch"] as const) {
        const real = blob(c.size);
        upstream.blobs.set(real.digest, { bytes: c.corrupt(real.bytes), chunked: c.chunked });
        const url = `${base}/v2/lib/app/blobs/${real.digest}`;
        if (client === "curl") {
          const got = await curl(url, dir);
          // Never a successful 200 whose body a script would keep as the blob.
          expect({ exit: got.exit, status: got.status }).not.toEqual({ exit: 0, status: 200 });
          if (got.status === 200) expect(got.bytes.byteLength).toBeLessThan(c.corrupt(real.bytes).byteLength);
        } else {
          const got = await fetched(url);
          if (got.status === 200 || got.status === 0) expect(got.error).toBeDefined();
          else expect(got.status).toBe(502);
        }
        // The stored copy was refused too: the next pull goes to the upstream again
        // (once the refused fetch has settled; it ends with the bytes the client saw).
        await new Promise((resolve) => setTimeout(resolve, 100));
        const before = upstream.seen.length;
        upstream.blobs.set(real.digest, { bytes: real.bytes, chunked: c.chunked });
        const again = await curl(url, dir);
        expect(again).toMatchObject({ exit: 0, status: 200 });
        expect(sha256(again.bytes)).toBe(real.digest);
        expect(upstream.seen.length).toBe(before + 1);
      }
    });
  }

  it("a matching large blob arrives whole, to curl and fetch", async () => {
    const real = blob(LARGE);
    upstream.blobs.set(real.digest, { bytes: real.bytes });
    const got = await curl(`${base}/v2/lib/ok/blobs/${real.digest}`, dir);
    expect(got).toMatchObject({ exit: 0, status: 200 });
    expect(sha256(got.bytes)).toBe(real.digest);
    const other = blob(LARGE);
    upstream.blobs.set(other.digest, { bytes: other.bytes, chunked: true });
    const viaFetch = await fetched(`${base}/v2/lib/ok/blobs/${other.digest}`);
    expect(viaFetch.status).toBe(200);
    expect(sha256(viaFetch.bytes!)).toBe(other.digest);
  });
});
