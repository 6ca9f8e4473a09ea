/**
 * A malicious upstream registry for the pull-through tests: a node:http server
 * on 127.0.0.1 that answers blob GETs and HEADs with whatever bytes it is
 * given for a digest (corrupt ones included), with or without a
 * `Content-Length`, written in 64 KiB pieces so that a large body arrives in
 * many chunks. It counts the requests it answers.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the upstream sends for one digest. */
export interface Served {
  bytes: Uint8Array;
  /** Send no `Content-Length` (a chunked body). */
  chunked?: boolean;
}

export interface CorruptUpstream {
  url: string;
  /** What to send for each digest (`sha256:…`). */
  blobs: Map<string, Served>;
  /** `METHOD path` of every request answered. */
  seen: string[];
  close(): Promise<void>;
}

export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Random bytes of `size` and their digest. */
export function blob(size: number): { bytes: Uint8Array; digest: string } {
  const bytes = new Uint8Array(randomBytes(size));
  return { bytes, digest: sha256(bytes) };
}

/** `bytes` with one byte changed at `at` (default the last): same length, another digest. */
export function flipped(bytes: Uint8Array, at = bytes.byteLength - 1): Uint8Array {
  const copy = bytes.slice();
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}

export async function corruptUpstream(): Promise<CorruptUpstream> {
  const blobs = new Map<string, Served>();
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const m = /^\/v2\/.+\/blobs\/(sha256:[0-9a-f]{64})$/.exec(req.url ?? "");
    const served = m ? blobs.get(m[1]!) : undefined;
    if (!served) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]}');
      return;
    }
    const headers: Record<string, string> = { "content-type": "application/octet-stream", "docker-content-digest": m![1]! };
    if (!served.chunked) headers["content-length"] = String(served.bytes.byteLength);
    res.writeHead(200, headers);
    if (req.method === "HEAD") return void res.end();
    void (async () => {
      for (let at = 0; at < served.bytes.byteLength; at += 65536) {
        if (!res.write(served.bytes.subarray(at, at + 65536))) await new Promise((resolve) => res.once("drain", resolve));
      }
      res.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    blobs,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
