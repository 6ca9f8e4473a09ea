/**
 * The bench's HTTP client side: small requests and chunk uploads with
 * node:http (keep-alive, file ranges streamed, never buffered), monolithic
 * uploads and downloads with curl (a C client, so the client steals as little
 * CPU as possible from the servers on a 2-core machine).
 */
import { createReadStream } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { runCmd } from "./proc.js";

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request; `file` streams bytes [start, end) of a file as the body. */
export function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Uint8Array | { file: string; start: number; end: number },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (body instanceof Uint8Array) h["content-length"] = String(body.byteLength);
    else if (body) h["content-length"] = String(body.end - body.start);
    const req = httpRequest(url, { method, headers: h, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (body instanceof Uint8Array) req.end(body);
    else if (body) {
      if (body.end === body.start) req.end();
      else createReadStream(body.file, { start: body.start, end: body.end - 1, highWaterMark: 1 << 20 }).on("error", reject).pipe(req);
    } else req.end();
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

/** Chunked upload: POST, PATCH chunks of `chunk` bytes with Content-Range, PUT ?digest=. Returns seconds. */
export async function chunkedUpload(base: string, repo: string, auth: Record<string, string>, file: string, size: number, digest: string, chunk: number): Promise<number> {
  const t0 = performance.now();
  let loc = await startUpload(base, repo, auth);
  for (let start = 0; start < size; start += chunk) {
    const end = Math.min(size, start + chunk);
    const r = await send("PATCH", loc, { ...auth, "content-type": "application/octet-stream", "content-range": `${start}-${end - 1}` }, { file, start, end });
    expectStatus(r, 202, `PATCH ${start}-${end - 1} ${base}`);
    loc = location(base, r);
  }
  const r = await send("PUT", withDigest(loc, digest), { ...auth, "content-length": "0" });
  expectStatus(r, 201, `PUT ?digest= after chunks ${base}`);
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
