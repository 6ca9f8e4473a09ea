/**
 * Every way a fetch handler is put on the wire, behind one interface, so the
 * matrix suite runs the same assertions through each of them.
 */
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { createHash } from "node:crypto";
import { serve as honoServe } from "@hono/node-server";
import { serve, type FetchHandler } from "../../src/node/index.js";
import { createExpressApp } from "../../examples/express/app.js";
import { createHonoApp } from "../../examples/hono/app.js";

/** A request the tests send. */
export interface Outgoing {
  method?: string;
  path: string;
  headers?: Record<string, string | string[]>;
  /** Bytes, or chunks produced lazily (streamed with backpressure). */
  body?: Buffer | Iterable<Buffer>;
}

/** What came back. The body is hashed while it streams; small bodies are also kept. */
export interface Reply {
  status: number;
  /** Header lines as received (names lower-cased), duplicates kept. */
  lines: [string, string][];
  size: number;
  sha256: string;
  text: string;
}

/** A handler served by one adapter. */
export interface Running {
  url: string;
  send(out: Outgoing): Promise<Reply>;
  close(): Promise<void>;
}

/** One way of serving a handler. `http` is false for the bare handler (no socket). */
export interface Target {
  name: string;
  http: boolean;
  start(handler: FetchHandler): Promise<Running>;
}

const KEEP_TEXT = 1 << 20;

function hashInto(): { add(chunk: Uint8Array): void; done(status: number, lines: [string, string][]): Reply } {
  const hash = createHash("sha256");
  const kept: Buffer[] = [];
  let size = 0;
  return {
    add(chunk) {
      hash.update(chunk);
      size += chunk.byteLength;
      if (size <= KEEP_TEXT) kept.push(Buffer.from(chunk));
    },
    done(status, lines) {
      return { status, lines, size, sha256: hash.digest("hex"), text: Buffer.concat(kept).toString("utf8") };
    },
  };
}

/** Send over a fresh TCP connection with `node:http` (no keep-alive reuse between tests). */
export function sendHttp(base: string, out: Outgoing): Promise<Reply> {
  const url = new URL(out.path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: out.method ?? "GET", headers: out.headers, agent: false },
      (res) => {
        const acc = hashInto();
        res.on("data", (chunk: Buffer) => acc.add(chunk));
        res.on("end", () => {
          const lines: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
          resolve(acc.done(res.statusCode ?? 0, lines));
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (out.body === undefined) req.end();
    else if (Buffer.isBuffer(out.body)) req.end(out.body);
    else Readable.from(out.body).pipe(req);
  });
}

/** Call the handler directly, as unit tests do. */
async function sendBare(handler: FetchHandler, base: string, out: Outgoing): Promise<Reply> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(out.headers ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const init: RequestInit & { duplex?: "half" } = { method: out.method ?? "GET", headers };
  if (out.body !== undefined) {
    init.body = (Buffer.isBuffer(out.body) ? new Uint8Array(out.body) : Readable.toWeb(Readable.from(out.body))) as BodyInit;
    init.duplex = "half";
  }
  const response = await handler(new Request(new URL(out.path, base), init));
  const acc = hashInto();
  if (response.body && init.method !== "HEAD") {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      acc.add(value);
    }
  }
  const lines: [string, string][] = [];
  for (const [name, value] of response.headers) if (name !== "set-cookie") lines.push([name, value]);
  for (const cookie of response.headers.getSetCookie()) lines.push(["set-cookie", cookie]);
  return acc.done(response.status, lines);
}

function listenOn(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function running(url: string, close: () => Promise<void>): Running {
  return { url, send: (out) => sendHttp(url, out), close };
}

/** The adapters under test. */
export const targets: Target[] = [
  {
    name: "bare handler",
    http: false,
    async start(handler) {
      const url = "http://registry.test";
      return { url, send: (out) => sendBare(handler, url, out), close: async () => {} };
    },
  },
  {
    name: "node http (serve)",
    http: true,
    async start(handler) {
      const server = await serve(handler, { port: 0 });
      return running(server.url, () => server.close(1000));
    },
  },
  {
    name: "express",
    http: true,
    async start(handler) {
      const server = createServer({ requestTimeout: 0 }, createExpressApp([{ prefix: "/v2", handler }]));
      return running(await listenOn(server), () => closeServer(server));
    },
  },
  {
    name: "hono",
    http: true,
    async start(handler) {
      const app = createHonoApp([{ prefix: "/v2", handler }]);
      const server = await new Promise<Server>((resolve) => {
        const s = honoServe({ fetch: app.fetch, port: 0, hostname: "127.0.0.1", serverOptions: { requestTimeout: 0 } }, () => resolve(s as Server));
      });
      return running(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => closeServer(server));
    },
  },
];
