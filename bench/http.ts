/**
 * The bench's HTTP client side: small requests and chunk uploads with
 * node:http (keep-alive, file ranges sent from two reused buffers), monolithic
 * uploads and downloads with curl (a C client, so the client steals as little
 * CPU as possible from the servers on a 2-core machine).
 */
import { open, type FileHandle } from "node:fs/promises";
import { Agent, request as httpRequest, type ClientRequest } from "node:http";
import { runCmd } from "./proc.js";

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Start a request: its reply, read whole, goes to `resolve`; a failure to `reject`. */
function request(method: string, url: string, headers: Record<string, string>, resolve: (r: Reply) => void, reject: (e: unknown) => void): ClientRequest {
  const req = httpRequest(url, { method, headers, agent }, (res) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    res.on("error", reject);
  });
  req.on("error", reject);
  return req;
}

/** One request with an optional in-memory body. */
export function send(method: string, url: string, headers: Record<string, string>, body?: Uint8Array): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const h = body ? { ...headers, "content-length": String(body.byteLength) } : headers;
    request(method, url, h, resolve, reject).end(body);
  });
}

export function expectStatus(r: Reply, status: number, what: string): void {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status}: ${r.body.toString("utf8").slice(0, 500)}`);
}

function location(base: string, r: Reply): string {
  const loc = r.headers.location;
  if (typeof loc !== "string") throw new Error(`no Location (status ${r.status})`);
  return new URL(loc, base).href;
}

function withDigest(loc: string, digest: string): string {
  const u = new URL(loc);
  u.searchParams.set("digest", digest);
  return u.href;
}

/** POST /blobs/uploads/ → the session URL. */
export async function startUpload(base: string, repo: string, auth: Record<string, string>): Promise<string> {
  const r = await send("POST", `${base}/v2/${repo}/blobs/uploads/`, { ...auth, "content-length": "0" });
  expectStatus(r, 202, `POST upload ${base}`);
  return location(base, r);
}

/** Small blob in one POST+PUT (set-up only). */
export async function pushSmallBlob(base: string, repo: string, auth: Record<string, string>, bytes: Uint8Array, digest: string): Promise<void> {
  const loc = await startUpload(base, repo, auth);
  const r = await send("PUT", withDigest(loc, digest), { ...auth, "content-type": "application/octet-stream" }, bytes);
  expectStatus(r, 201, `PUT small blob ${base}`);
}

/** Monolithic upload: POST, then PUT ?digest= with the whole file streamed by curl. Returns seconds. */
export async function monolithicUpload(curl: string, base: string, repo: string, auth: Record<string, string>, file: string, digest: string): Promise<number> {
  const t0 = performance.now();
  const loc = await startUpload(base, repo, auth);
  const args = ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-X", "PUT", "-T", file, "-H", "Expect:", "-H", "Content-Type: application/octet-stream"];
  for (const [k, v] of Object.entries(auth)) args.push("-H", `${k}: ${v}`);
  args.push(withDigest(loc, digest));
  const r = await runCmd(curl, args);
  const t1 = performance.now();
  const [code] = r.stdout.trim().split(" ");
  if (r.code !== 0 || code !== "201") throw new Error(`monolithic PUT to ${base} failed: curl ${r.code} http ${code} ${r.stderr}`);
  return (t1 - t0) / 1000;
}

/** One PUT of the whole file with curl to `url` (the pipeline ceiling's upload, no registry protocol). Returns seconds. */
export async function putFile(curl: string, url: string, file: string): Promise<number> {
  const t0 = performance.now();
  const r = await runCmd(curl, ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", "-T", file, "-H", "Expect:", "-H", "Content-Type: application/octet-stream", url]);
  const t1 = performance.now();
  if (r.code !== 0 || r.stdout.trim() !== "201") throw new Error(`PUT to ${url} failed: curl ${r.code} http ${r.stdout.trim()} ${r.stderr}`);
  return (t1 - t0) / 1000;
}

/** GET `file` from the pipeline ceiling's server (bench/server.ts) with curl into /dev/null; checks the byte count. Returns seconds. */
export async function getFile(curl: string, url: string, file: string | undefined, size: number): Promise<number> {
  const t0 = performance.now();
  // No file: the bench server's pipeline sends `size` bytes from memory (bench/server.ts).
  const r = await runCmd(curl, ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", "-H", file === undefined ? `x-memory-bytes: ${size}` : `x-file: ${file}`, url]);
  const t1 = performance.now();
  const [code, got] = r.stdout.trim().split(" ");
  if (r.code !== 0 || code !== "200" || Number(got) !== size) throw new Error(`GET ${file} from ${url} failed: curl ${r.code} http ${code} bytes ${got}/${size} ${r.stderr}`);
  return (t1 - t0) / 1000;
}

/** Bytes per read of a chunk upload's file; two such buffers per upload, reused. */
const SEND_BUFFER = 1 << 20;

/**
 * A request whose body is bytes [start, end) of an open file, sent from two
 * reused buffers: one is read from the file while the other is on the socket.
 * The client then allocates nothing per MiB sent, so it takes as little as it
 * can of the two cores the servers run on (a read stream per request cost
 * 1.0-1.4 s of CPU per GiB, allocation and GC included).
 */
function sendRange(method: string, url: string, headers: Record<string, string>, file: FileHandle, start: number, end: number, buffers: readonly [Buffer, Buffer]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(method, url, { ...headers, "content-length": String(end - start) }, resolve, reject);
    const pump = async (): Promise<void> => {
      // a buffer is read into again only once the socket has taken its last write
      const onSocket: [Promise<void>, Promise<void>] = [Promise.resolve(), Promise.resolve()];
      for (let at = start, i = 0; at < end; i ^= 1) {
        await onSocket[i];
        const buffer = buffers[i]!;
        const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, end - at), at);
        if (bytesRead === 0) throw new Error(`file ended at ${at}, before ${end}`);
        at += bytesRead;
        onSocket[i] = new Promise((done, fail) => req.write(buffer.subarray(0, bytesRead), (error) => (error ? fail(error) : done())));
      }
      await Promise.all(onSocket);
      req.end();
    };
    pump().catch((error: unknown) => {
      req.destroy(error as Error);
      reject(error);
    });
  });
}

/** Chunked upload: POST, PATCH chunks of `chunk` bytes with Content-Range, PUT ?digest=. Returns seconds. */
export async function chunkedUpload(base: string, repo: string, auth: Record<string, string>, file: string, size: number, digest: string, chunk: number): Promise<number> {
  const t0 = performance.now();
  const handle = await open(file, "r");
  const buffers = [Buffer.allocUnsafe(SEND_BUFFER), Buffer.allocUnsafe(SEND_BUFFER)] as const;
  try {
    let loc = await startUpload(base, repo, auth);
    for (let start = 0; start < size; start += chunk) {
      const end = Math.min(size, start + chunk);
      const r = await sendRange("PATCH", loc, { ...auth, "content-type": "application/octet-stream", "content-range": `${start}-${end - 1}` }, handle, start, end, buffers);
      expectStatus(r, 202, `PATCH ${start}-${end - 1} ${base}`);
      loc = location(base, r);
    }
    const r = await send("PUT", withDigest(loc, digest), { ...auth, "content-length": "0" });
    expectStatus(r, 201, `PUT ?digest= after chunks ${base}`);
  } finally {
    await handle.close();
  }
  return (performance.now() - t0) / 1000;
}

/** GET a blob with curl into /dev/null; checks the byte count. Returns seconds. */
export async function download(curl: string, base: string, repo: string, auth: Record<string, string>, digest: string, size: number): Promise<number> {
  const args = ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}"];
  for (const [k, v] of Object.entries(auth)) args.push("-H", `${k}: ${v}`);
  args.push(`${base}/v2/${repo}/blobs/${digest}`);
  const t0 = performance.now();
  const r = await runCmd(curl, args);
  const t1 = performance.now();
  const [code, got] = r.stdout.trim().split(" ");
  if (r.code !== 0 || code !== "200" || Number(got) !== size) throw new Error(`download from ${base} failed: curl ${r.code} http ${code} bytes ${got}/${size} ${r.stderr}`);
  return (t1 - t0) / 1000;
}
