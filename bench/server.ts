/**
 * registry-kit as the benchmark runs it: its own child process (so that its
 * RSS and CPU are its own), composed from the library's parts exactly as an
 * embedding user would: createRegistry + fsStorage + createTokenAuthorizer,
 * served by `serve` from registry-kit/node on 127.0.0.1.
 *
 *   node --import tsx bench/server.ts <config.json>
 *
 * The config (written by bench/run.ts) names the storage root, the port and
 * the `auth.token` block (realm, service, issuer, rootcertbundle path), the
 * same values Distribution gets in its config.yml. With `"hello": true` it is
 * instead the bare `node:http` hello-world used as the machine's ceiling, and
 * with `"tokens"` the token service alone (for the issuance rates), and with
 * `"pipeline": true` the transfer ceilings (a bare node:http server that hashes
 * and writes each PUT body and sends a file for a GET, see `pipeline` below).
 *
 * Why compose rather than run `registry-kit serve`: the all-in-one server
 * also mounts the token service and the users API and writes an access log
 * line per request; Distribution in the bench runs with its access log off
 * and no token service either, so the composition is the like-for-like
 * comparison, and it is what the library's users embed.
 *
 * Prints one line `listening <url>` on stdout when ready; exits on SIGTERM/SIGINT
 * or when its parent goes away (stdin closes).
 */
import cluster from "node:cluster";
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as AuthModule from "../src/auth/index.js";
import type * as NodeModule from "../src/node/index.js";
import type * as RegistryModule from "../src/registry/index.js";
import type * as FsModule from "../src/storage/fs/index.js";
import type * as S3Module from "../src/storage/s3/index.js";
import type * as EventsModule from "../src/events/index.js";
import type * as StorageModule from "../src/storage/index.js";

// The library as users run it: the build in RK_BENCH_LIB (bench/run.ts builds it
// with tsup), or the TypeScript sources when that is not set.
const lib = process.env.RK_BENCH_LIB;
const load = async <T>(sub: string): Promise<T> =>
  (await import(lib ? pathToFileURL(`${lib}/${sub}/index.js`).href : `../src/${sub}/index.js`)) as T;
const { aclPolicy, createTokenAuthorizer, createTokenService, pemKeys } = await load<typeof AuthModule>("auth");
const { nodeWebhookPost, serve } = await load<typeof NodeModule>("node");
const { createMetrics, createRegistry } = await load<typeof RegistryModule>("registry");
const { instrumentStorage } = await load<typeof StorageModule>("storage");
const { fsStorage } = await load<typeof FsModule>("storage/fs");

interface BenchServerConfig {
  root: string;
  port: number;
  uploadSecret: string;
  fsync?: boolean;
  auth?: { realm: string; service: string; issuer: string; rootcertbundle: string };
  /** S3 storage (path style, blob redirects off) instead of the filesystem under `root` (bench/run/s3.ts). */
  s3?: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
  hello?: boolean;
  /**
   * Run this many registry processes on the one port (node:cluster: the primary
   * accepts, the workers serve), as a deployment that uses every core would.
   * Default 1: this process serves.
   */
  workers?: number;
  /**
   * Instead of a registry, the upload ceiling of a bare node:http server on this
   * machine: each PUT body is hashed (node:crypto SHA-256) and written to a new
   * file under `root` in 1 MiB writes (an early fdatasync every 64 MiB, as the
   * fs driver), fdatasynced, answered 201, then removed. A GET answers the
   * file named by its `x-file` header (the download ceiling).
   */
  pipeline?: boolean;
  /** Serve only the token service, signing with this key (PEM files), anonymous pulls of `bench/*` allowed. */
  tokens?: { service: string; issuer: string; privateKey: string; certificate: string };
}

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as BenchServerConfig;

let stop: () => Promise<void>;
if (config.hello) {
  const body = Buffer.from("hello world\n");
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(config.port, "127.0.0.1", resolve));
  console.log(`listening http://127.0.0.1:${config.port}`);
  stop = () => new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
} else if (config.pipeline) {
  mkdirSync(config.root, { recursive: true });
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.headers["x-memory-bytes"]) return sendMemory(Number(req.headers["x-memory-bytes"]), res);
    if (req.method === "GET") return sendFile(req.headers["x-file"] as string, res);
    receive(req).then(
      (digest) => res.writeHead(201, { "docker-content-digest": digest }).end(),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(config.port, "127.0.0.1", resolve));
  console.log(`listening http://127.0.0.1:${config.port}`);
  stop = () => new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
} else if ((config.workers ?? 1) > 1 && cluster.isPrimary) {
  // The primary only forks and accepts; each worker runs this file with the same config.
  const workers = Array.from({ length: config.workers! }, () => cluster.fork());
  await Promise.all(workers.map((w) => new Promise<void>((resolve) => w.once("listening", () => resolve()))));
  console.log(`listening http://127.0.0.1:${config.port}`);
  stop = async () => {
    await Promise.all(workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : (w.once("exit", () => resolve()), w.kill("SIGTERM"))))));
  };
} else if (config.tokens) {
  const t = config.tokens;
  const service = createTokenService({
    issuer: t.issuer,
    service: t.service,
    keys: pemKeys({ privateKey: readFileSync(t.privateKey, "utf8"), certificate: readFileSync(t.certificate, "utf8") }),
    policy: aclPolicy([{ match: { type: "repository", name: "bench/*" }, actions: ["pull"] }]),
    x5c: false,
  });
  const running = await serve(service, { host: "127.0.0.1", port: config.port });
  console.log(`listening ${running.url}`);
  stop = () => running.close(2_000);
} else {
  // RK_BENCH_METRICS=1: the registry and its storage report into metrics, as with http.debug.prometheus.
  const metrics = process.env.RK_BENCH_METRICS === "1" ? createMetrics() : undefined;
  const storage = config.s3
    ? (await load<typeof S3Module>("storage/s3")).s3Storage({ ...config.s3, forcePathStyle: true })
    : fsStorage({ root: config.root, fsync: config.fsync ?? true });
  // RK_BENCH_NOTIFY=<url>: every event goes to a webhook at <url> through the durable outbox, as with `notifications`
  // (POSTs through node:http from a worker thread, as `registry-kit serve` sends them; RK_BENCH_POST=caller: from
  // the request thread; builds before nodeWebhookPost use fetch, builds before its `worker` option the caller's thread).
  // RK_BENCH_OUTBOX=memory|nofsync: the outbox in memory storage, or on the same root without fsync (to tell its
  // file I/O from the rest of an event's cost).
  const notifyUrl = process.env.RK_BENCH_NOTIFY;
  const notifier = notifyUrl ? (await load<typeof EventsModule>("events")).createNotifier({ storage: process.env.RK_BENCH_OUTBOX === "nofsync" ? fsStorage({ root: config.root, fsync: false }) : process.env.RK_BENCH_OUTBOX === "memory" ? (await load<{ memoryStorage: () => typeof storage }>("storage/memory")).memoryStorage() : storage, endpoints: [{ name: "bench", url: notifyUrl }], ...(nodeWebhookPost ? { post: nodeWebhookPost({ worker: process.env.RK_BENCH_POST !== "caller" }) } : {}) }) : undefined;
  notifier?.start();
  const registry = createRegistry({
    ...(notifier ? { onEvent: notifier } : {}),
    storage: metrics ? instrumentStorage(storage, metrics, config.s3 ? "s3" : "filesystem") : storage,
    ...(config.s3 ? { redirect: false } : {}),
    ...(metrics ? { metrics } : {}),
    uploadSecret: config.uploadSecret,
    authorize: config.auth
      ? createTokenAuthorizer({
          realm: config.auth.realm,
          service: config.auth.service,
          issuer: config.auth.issuer,
          rootCertBundle: readFileSync(config.auth.rootcertbundle, "utf8"),
        })
      : undefined,
  });
  const running = await serve(registry, { host: "127.0.0.1", port: config.port });
  console.log(`listening ${running.url}`);
  stop = () => running.close(2_000);
}

/**
 * The download ceiling: the file named by `x-file`, read in 1 MiB pieces into
 * two buffers in turn, one read while the other is on the socket (as the Node
 * adapter sends a byte stream; a read stream allocating a buffer per read was
 * slower than registry-kit itself here).
 */
/** `size` bytes from one 4 MiB buffer in memory (no file, no reads): what the client can receive here at all. */
function sendMemory(size: number, res: ServerResponse): void {
  const buffer = Buffer.alloc(4 << 20, 7);
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
  void (async () => {
    for (let at = 0; at < size; at += buffer.length) {
      if (!res.write(buffer.subarray(0, Math.min(buffer.length, size - at)))) await new Promise((done) => res.once("drain", done));
    }
    res.end();
  })().catch(() => res.destroy());
}

function sendFile(file: string, res: ServerResponse): void {
  const size = statSync(file).size;
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
  void (async () => {
    const handle = await open(file, "r");
    try {
      const buffers = [Buffer.allocUnsafe(1 << 20), Buffer.allocUnsafe(1 << 20)];
      const onSocket: Array<Promise<void>> = [Promise.resolve(), Promise.resolve()];
      for (let at = 0, i = 0; at < size; i ^= 1) {
        await onSocket[i];
        const { bytesRead } = await handle.read(buffers[i]!, 0, Math.min(1 << 20, size - at), at);
        if (bytesRead === 0) break;
        at += bytesRead;
        onSocket[i] = new Promise((done) => res.write(buffers[i]!.subarray(0, bytesRead), () => done()));
      }
      await Promise.all(onSocket);
      res.end();
    } finally {
      await handle.close();
    }
  })().catch(() => res.destroy());
}

/**
 * The pipeline ceiling's work for one body: hash, write in 1 MiB batches (one
 * write in flight), a background fdatasync every 64 MiB (as the fs driver's
 * early writeback), fdatasync.
 */
async function receive(req: IncomingMessage): Promise<string> {
  const hash = createHash("sha256");
  const file = join(config.root, randomUUID());
  const handle = await open(file, "w");
  let syncing: Promise<unknown> | undefined;
  try {
    let batch: Buffer[] = [];
    let bytes = 0;
    let unsynced = 0;
    let inFlight: Promise<unknown> = Promise.resolve();
    for await (const chunk of req as AsyncIterable<Buffer>) {
      hash.update(chunk);
      batch.push(chunk);
      bytes += chunk.length;
      if (bytes >= 1 << 20) {
        await inFlight;
        inFlight = handle.writev(batch);
        unsynced += bytes;
        batch = [];
        bytes = 0;
        if (unsynced >= 64 << 20 && !syncing) {
          unsynced = 0;
          syncing = inFlight.then(() => handle.datasync()).finally(() => (syncing = undefined));
        }
      }
    }
    await inFlight;
    if (batch.length > 0) await handle.writev(batch);
    await syncing;
    await handle.datasync();
    return `sha256:${hash.digest("hex")}`;
  } finally {
    await syncing?.catch(() => {});
    await handle.close();
    await rm(file, { force: true });
  }
}

let stopping = false;
const shutdown = (): void => {
  if (stopping) return;
  stopping = true;
  stop().then(() => process.exit(0), () => process.exit(1));
  setTimeout(() => process.exit(1), 5_000).unref();
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
// The parent holds our stdin open; when it dies (even by SIGKILL) stdin ends and we go too.
process.stdin.on("end", shutdown);
process.stdin.on("error", shutdown);
process.stdin.resume();
