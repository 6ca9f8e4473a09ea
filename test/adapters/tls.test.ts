/**
 * serve() with TLS (HTTP/1.1 and HTTP/2 by ALPN), client certificates, the
 * minimum TLS version, and cleartext HTTP/2 (h2c) beside HTTP/1.1, with the
 * real registry on memory storage and certificates made by `openssl`.
 */
import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import { connect as h2connect, type ClientHttp2Session, type OutgoingHttpHeaders } from "node:http2";
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from "node:https";
import { connect as netConnect } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { serve, TlsConfigError, type RunningServer, type ServeTlsOptions } from "../../src/node/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { makeCerts, type Certs } from "./certs.js";
import { createTestHandler, patternChunks, patternSha256 } from "./test-handler.js";

let certs: Certs;
beforeAll(() => {
  certs = makeCerts();
});
afterAll(() => certs.remove());

const registry = () => createRegistry({ storage: memoryStorage(), uploadSecret: "test-secret" });
const tlsFiles = (extra: Partial<ServeTlsOptions> = {}): ServeTlsOptions => ({ certFile: certs.serverCert, keyFile: certs.serverKey, ...extra });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  alpn?: string | false;
  version?: string;
}

/** One HTTP/1.1 request over https. */
function httpsGet(url: string, options: HttpsRequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { agent: false, ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), version: res.httpVersion }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** One request on an HTTP/2 session; `body` chunks are streamed. */
function h2(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Iterable<Buffer>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let got: Answer["headers"] = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      got = h;
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => resolve({ status, headers: got, body: Buffer.concat(chunks), alpn: session.alpnProtocol }));
    stream.on("error", reject);
    if (body !== undefined) {
      (async () => {
        for (const chunk of body) if (!stream.write(chunk)) await new Promise((r) => stream.once("drain", r));
        stream.end();
      })().catch(reject);
    }
  });
}

function h2session(url: string, options: ConnectionOptions = {}): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = h2connect(url, options);
    session.once("connect", () => resolve(session));
    session.once("error", reject);
  });
}

/** Open a TLS connection and report whether the handshake (and the server's verdict on it) succeeded. */
function handshake(port: number, options: ConnectionOptions): Promise<{ ok: true; protocol: string | null } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, servername: "localhost", ca: certs.read(certs.ca), ...options });
    socket.once("secureConnect", () => {
      // TLS 1.3 sends the server's refusal of a client certificate after the client's
      // handshake completes: ask for something and see whether an answer comes.
      socket.write("GET /v2/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    let text = "";
    socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
    socket.once("end", () => resolve(text.startsWith("HTTP/1.1 200") ? { ok: true, protocol: socket.getProtocol() } : { ok: false, error: `answer: ${text.slice(0, 40)}` }));
    socket.once("error", (error) => resolve({ ok: false, error: error.message }));
  });
}

describe("serve() with TLS", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close(500);
    running = undefined;
  });

  it("answers https on HTTP/1.1 with an https URL", async () => {
    running = await serve(registry(), { tls: tlsFiles() });
    expect(running.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    // HTTP/1.1 through the HTTP/2 server gets serve()'s limits, not Node's 5-minute request timeout.
    expect(running.server).toMatchObject({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 65_000 });
    const res = await httpsGet(`${running.url}/v2/`, { ca: certs.read(certs.ca) });
    expect(res.status).toBe(200);
    expect(res.version).toBe("1.1");
    expect(res.headers["docker-distribution-api-version"]).toBe("registry/2.0");
  });

  it("refuses a client that does not trust the server's CA", async () => {
    running = await serve(registry(), { tls: tlsFiles() });
    await expect(httpsGet(`${running.url}/v2/`)).rejects.toThrow(/certificate/);
  });

  it("uploads and downloads a streamed blob over HTTP/2 (ALPN h2), with https Locations", async () => {
    running = await serve(registry(), { tls: tlsFiles() });
    const session = await h2session(running.url, { ca: certs.read(certs.ca) });
    try {
      const size = 5 * 1024 * 1024 + 123;
      const digest = `sha256:${patternSha256(size)}`;
      const started = await h2(session, { ":method": "POST", ":path": "/v2/h2/test/blobs/uploads/" });
      expect(started.alpn).toBe("h2");
      expect(started.status).toBe(202);
      const location = new URL(String(started.headers.location), running.url);
      expect(location.protocol).toBe("https:");
      expect(started.headers.connection).toBeUndefined();
      location.searchParams.set("digest", digest);
      // No content-length: the body is only framed by HTTP/2 DATA frames.
      const put = await h2(session, { ":method": "PUT", ":path": `${location.pathname}${location.search}`, "content-type": "application/octet-stream" }, patternChunks(size));
      expect(put.status).toBe(201);
      const head = await h2(session, { ":method": "HEAD", ":path": `/v2/h2/test/blobs/${digest}` });
      expect(head.status).toBe(200);
      expect(head.headers["content-length"]).toBe(String(size));
      expect(head.body.length).toBe(0);
      const got = await h2(session, { ":method": "GET", ":path": `/v2/h2/test/blobs/${digest}` });
      expect(got.status).toBe(200);
      expect(got.body.length).toBe(size);
      expect(`sha256:${createHash("sha256").update(got.body).digest("hex")}`).toBe(digest);
      const missing = await h2(session, { ":method": "GET", ":path": `/v2/h2/test/blobs/sha256:${"0".repeat(64)}` });
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body.toString()).errors[0].code).toBe("BLOB_UNKNOWN");
    } finally {
      session.close();
    }
  });

  it("answers an HTTP/2 Expect: 100-continue upload that the handler refuses without reading it", async () => {
    running = await serve(registry(), { tls: tlsFiles() });
    const session = await h2session(running.url, { ca: certs.read(certs.ca) });
    try {
      // A digest that does not match the body: the registry reads and refuses it.
      const started = await h2(session, { ":method": "POST", ":path": "/v2/h2/c/blobs/uploads/" });
      const location = new URL(String(started.headers.location), running.url);
      location.searchParams.set("digest", `sha256:${"1".repeat(64)}`);
      const put = await h2(session, { ":method": "PUT", ":path": `${location.pathname}${location.search}`, expect: "100-continue", "content-length": "5" }, [Buffer.from("hello")]);
      expect(put.status).toBe(400);
      expect(JSON.parse(put.body.toString()).errors[0].code).toBe("DIGEST_INVALID");
    } finally {
      session.close();
    }
  });

  it("errors the body and aborts the signal when an HTTP/2 client goes away mid-upload (no END_STREAM)", async () => {
    const t = createTestHandler();
    running = await serve(t.handler, { tls: tlsFiles() });
    const session = await h2session(running.url, { ca: certs.read(certs.ca) });
    const stream = session.request({ ":method": "PUT", ":path": "/v2/_test/abort" }, { endStream: false });
    stream.on("error", () => {});
    stream.write(Buffer.alloc(64 * 1024));
    await t.seen.abortStarted;
    session.destroy();
    expect(await t.seen.aborted).toContain("client disconnected");
    // The server goes on serving new sessions.
    const next = await h2session(running.url, { ca: certs.read(certs.ca) });
    try {
      expect((await h2(next, { ":path": "/v2/_test/missing" })).status).toBe(404);
    } finally {
      next.close();
    }
  });

  it("aborts the handler's signal when an HTTP/2 client resets its upload stream, and keeps the session serving", async () => {
    const t = createTestHandler();
    running = await serve(t.handler, { tls: tlsFiles() });
    const session = await h2session(running.url, { ca: certs.read(certs.ca) });
    try {
      const stream = session.request({ ":method": "PUT", ":path": "/v2/_test/abort" }, { endStream: false });
      stream.on("error", () => {});
      stream.write(Buffer.alloc(64 * 1024));
      await t.seen.abortStarted;
      stream.close(0x8 /* CANCEL */);
      expect(await t.seen.aborted).toContain("client disconnected");
      // The other streams of the session are unaffected.
      expect((await h2(session, { ":path": "/v2/_test/missing" })).status).toBe(404);
    } finally {
      session.close();
    }
  });

  it("close() lets an in-flight HTTP/2 request finish, and ends idle HTTP/2 sessions and HTTP/1.1 keep-alive connections", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const handler = async (request: Request): Promise<Response> => {
      if (new URL(request.url).pathname === "/slow") {
        entered();
        await released;
        return new Response("slow done");
      }
      return new Response("ok");
    };
    const server = await serve(handler, { tls: tlsFiles() });
    const ca = certs.read(certs.ca);
    // An idle HTTP/1.1 keep-alive connection and an idle HTTP/2 session...
    const agent = new (await import("node:https")).Agent({ keepAlive: true, ca });
    expect((await httpsGet(`${server.url}/x`, { agent })).status).toBe(200);
    const idle = await h2session(server.url, { ca });
    const idleClosed = new Promise<void>((r) => idle.once("close", () => r()));
    // ...and a busy HTTP/2 session.
    const busy = await h2session(server.url, { ca });
    const slow = h2(busy, { ":path": "/slow" });
    await inHandler;
    // Without the bookkeeping, close() would wait the whole (test-long) timeout for these connections.
    const closed = server.close(600_000);
    release();
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("slow done");
    await closed;
    await idleClosed;
    expect(server.server.listening).toBe(false);
    agent.destroy();
    busy.destroy();
  });

  it("with http2: false offers no h2 by ALPN, only HTTP/1.1", async () => {
    running = await serve(registry(), { tls: tlsFiles(), http2: false });
    const result = await handshake(running.port, { ALPNProtocols: ["h2", "http/1.1"] });
    expect(result).toEqual({ ok: true, protocol: "TLSv1.3" });
    await expect(h2session(running.url, { ca: certs.read(certs.ca) })).rejects.toThrow();
  });

  it("with client CAs: no certificate and another CA's certificate are refused, the right one gets 200", async () => {
    running = await serve(registry(), { tls: tlsFiles({ clientCaFiles: [certs.ca] }) });
    const none = await handshake(running.port, {});
    expect(none.ok).toBe(false);
    const other = await handshake(running.port, { cert: certs.read(certs.otherClientCert), key: certs.read(certs.otherClientKey) });
    expect(other.ok).toBe(false);
    const good = await handshake(running.port, { cert: certs.read(certs.clientCert), key: certs.read(certs.clientKey) });
    expect(good.ok).toBe(true);
    const session = await h2session(running.url, { ca: certs.read(certs.ca), cert: certs.read(certs.clientCert), key: certs.read(certs.clientKey) });
    try {
      expect((await h2(session, { ":path": "/v2/" })).status).toBe(200);
    } finally {
      session.close();
    }
  });

  it("enforces the minimum TLS version: a TLS 1.2 client is refused when TLS 1.3 is the minimum", async () => {
    running = await serve(registry(), { tls: tlsFiles({ minVersion: "TLSv1.3" }) });
    const old = await handshake(running.port, { maxVersion: "TLSv1.2" });
    expect(old.ok).toBe(false);
    if (!old.ok) expect(old.error).toMatch(/version|alert/i);
    expect(await handshake(running.port, { minVersion: "TLSv1.3" })).toEqual({ ok: true, protocol: "TLSv1.3" });
  });

  it("uses only the given TLS 1.2 cipher suites", async () => {
    running = await serve(registry(), { tls: tlsFiles({ ciphers: "ECDHE-ECDSA-AES256-GCM-SHA384" }) });
    const refused = await handshake(running.port, { maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256" });
    expect(refused.ok).toBe(false);
    expect(await handshake(running.port, { maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-AES256-GCM-SHA384" })).toEqual({ ok: true, protocol: "TLSv1.2" });
  });

  it("fails start-up with a TlsConfigError for a missing file, a bad PEM, or a key of another certificate", async () => {
    await expect(serve(registry(), { tls: { certFile: `${certs.dir}/nope.crt`, keyFile: certs.serverKey } })).rejects.toThrow(
      new TlsConfigError(`cannot read the TLS certificate file ${certs.dir}/nope.crt: ENOENT`),
    );
    await expect(serve(registry(), { tls: { cert: "not a pem", keyFile: certs.serverKey } })).rejects.toThrow(TlsConfigError);
    await expect(serve(registry(), { tls: { certFile: certs.serverCert, keyFile: certs.clientKey } })).rejects.toThrow(/refused by OpenSSL/);
    await expect(serve(registry(), { tls: { certFile: certs.serverCert } })).rejects.toThrow(/private key/);
  });
});

/** Send `chunks` over a plain TCP connection (a pause between them) and read until the server closes it. */
function rawExchange(port: number, chunks: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
    socket.once("close", () => resolve(text));
    socket.once("error", reject);
    socket.once("connect", async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 50));
        socket.write(chunk);
      }
    });
  });
}

describe("serve() with TLS: plain HTTP to the TLS port (issue 43)", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close(500);
    running = undefined;
  });
  const GO_ANSWER = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

  for (const http2 of [true, false]) {
    it(`gets Go's 400 "Client sent an HTTP request to an HTTPS server." and https still works (http2: ${http2})`, async () => {
      running = await serve(registry(), { tls: tlsFiles(), http2 });
      expect(await rawExchange(running.port, ["GET /v2/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"])).toBe(GO_ANSWER);
      expect(await rawExchange(running.port, ["HEAD /v2/ HTTP/1.1\r\n\r\n"])).toBe(GO_ANSWER);
      // The request line in pieces: the first five bytes decide, as in Go.
      expect(await rawExchange(running.port, ["PU", "T /v2/x HTTP/1.1\r\n\r\n"])).toBe(GO_ANSWER);
      const res = await httpsGet(`${running.url}/v2/`, { ca: certs.read(certs.ca) });
      expect(res.status).toBe(200);
      if (http2) {
        const session = await h2session(running.url, { ca: certs.read(certs.ca) });
        try {
          expect((await h2(session, { ":path": "/v2/" })).status).toBe(200);
        } finally {
          session.close();
        }
      }
    });
  }

  it("other garbage is closed without an answer, as Go does", async () => {
    running = await serve(registry(), { tls: tlsFiles() });
    expect(await rawExchange(running.port, ["BREW /pot HTCPCP/1.0\r\n\r\n"])).toBe("");
  });

  it("close() does not wait for a connection that never sent a byte", async () => {
    const server = await serve(registry(), { tls: tlsFiles() });
    const silent = netConnect(server.port, "127.0.0.1");
    await new Promise((r) => silent.once("connect", r));
    const closedSocket = new Promise((r) => silent.once("close", r));
    const started = Date.now();
    await server.close(60_000);
    await closedSocket;
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("drops a connection that sends nothing within headersTimeout", async () => {
    running = await serve(registry(), { tls: tlsFiles(), headersTimeout: 300 });
    expect(await rawExchange(running.port, [])).toBe("");
  });
});

describe("serve() with h2c", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close(500);
    running = undefined;
  });

  it("answers HTTP/2 with prior knowledge and HTTP/1.1 on the same port", async () => {
    running = await serve(registry(), { h2c: true });
    expect(running.url).toMatch(/^http:\/\//);
    const session = await h2session(running.url);
    try {
      const size = 3 * 1024 * 1024;
      const digest = `sha256:${patternSha256(size)}`;
      const started = await h2(session, { ":method": "POST", ":path": "/v2/h2c/test/blobs/uploads/" });
      expect(started.status).toBe(202);
      const location = new URL(String(started.headers.location), running.url);
      location.searchParams.set("digest", digest);
      expect((await h2(session, { ":method": "PUT", ":path": `${location.pathname}${location.search}` }, patternChunks(size))).status).toBe(201);
      const got = await h2(session, { ":path": `/v2/h2c/test/blobs/${digest}` });
      expect(`sha256:${createHash("sha256").update(got.body).digest("hex")}`).toBe(digest);
    } finally {
      session.close();
    }
    const http1 = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(`${running!.url}/v2/`, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.alloc(0), version: res.httpVersion }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(http1).toMatchObject({ status: 200, version: "1.1" });
  });

  it("without h2c, a prior-knowledge HTTP/2 client gets no HTTP/2 answer", async () => {
    running = await serve(registry());
    const session = h2connect(running.url);
    const outcome = await new Promise<string>((resolve) => {
      session.once("error", (e) => resolve(`error ${e.message}`));
      const stream = session.request({ ":path": "/v2/" });
      stream.on("response", () => resolve("answered"));
      stream.on("error", (e) => resolve(`error ${e.message}`));
      stream.end();
    });
    session.destroy();
    expect(outcome).toMatch(/^error/);
  });

  it("refuses h2c together with tls", async () => {
    await expect(serve(registry(), { h2c: true, tls: tlsFiles() })).rejects.toThrow(/h2c is cleartext/);
  });
});
