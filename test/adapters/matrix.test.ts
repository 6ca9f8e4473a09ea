/**
 * One HTTP suite, run through every adapter (node http, Express, Hono) and
 * through the bare handler, so that an adapter bug cannot hide.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHandler, patternChunks, patternSha256, type Observations } from "./test-handler.js";
import { targets, type Running } from "./targets.js";
import { collect, rawConnect, rawExchange, TLS_CLIENT_HELLO } from "./raw.js";

const BIG = 64 * 1024 * 1024;
const BIG_SHA = patternSha256(BIG);

function header(lines: [string, string][], name: string): string[] {
  return lines.filter(([n]) => n === name).map(([, v]) => v);
}

describe.each(targets)("$name", (target) => {
  let server: Running;
  let seen: Observations;

  beforeAll(async () => {
    const t = createTestHandler();
    seen = t.seen;
    server = await target.start(t.handler);
  });
  afterAll(async () => {
    await server.close();
  });

  // HTTP-only checks (Host, TLS, 100-continue, aborts) exist only for the targets that
  // speak HTTP; they are not defined, rather than skipped, for the bare handler.
  const undefinedTest = Object.assign(() => {}, { each: () => () => {} });
  const httpOnly = (target.http ? it : undefinedTest) as unknown as typeof it;

  it("streams a 64 MiB body up with an identical SHA-256", async () => {
    const reply = await server.send({ method: "POST", path: "/v2/_test/hash", body: patternChunks(BIG) });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ sha256: BIG_SHA, size: BIG });
  });

  it("streams a 64 MiB body down with an identical SHA-256", async () => {
    const reply = await server.send({ path: `/v2/_test/blob?size=${BIG}` });
    expect(reply.status).toBe(200);
    expect(header(reply.lines, "content-length")).toEqual([String(BIG)]);
    expect(reply.size).toBe(BIG);
    expect(reply.sha256).toBe(BIG_SHA);
  });

  it("keeps the handler's Content-Length on HEAD and sends no body", async () => {
    const reply = await server.send({ method: "HEAD", path: "/v2/_test/blob?size=12345" });
    expect(reply.status).toBe(200);
    expect(header(reply.lines, "content-length")).toEqual(["12345"]);
    expect(reply.size).toBe(0);
  });

  it("keeps repeated request and response headers, the full path and the query", async () => {
    const reply = await server.send({ path: "/v2/_test/echo?x=1&y=%2F", headers: { "x-dup": ["a", "b"] } });
    expect(reply.status).toBe(200);
    const echoed = JSON.parse(reply.text) as { url: string; dup: string };
    expect(echoed.dup).toBe("a, b");
    expect(new URL(echoed.url).pathname).toBe("/v2/_test/echo");
    expect(new URL(echoed.url).search).toBe("?x=1&y=%2F");
    expect(header(reply.lines, "set-cookie")).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    // Link is a list header: two lines or one comma-joined line are equivalent.
    expect(header(reply.lines, "link").join(", ")).toBe('</v2/_test/echo?n=2>; rel="next", </v2/_test/echo?n=0>; rel="prev"');
  });

  httpOnly("builds the URL from the Host header", async () => {
    const reply = await server.send({ path: "/v2/_test/echo", headers: { host: "registry.example:5000" } });
    expect(JSON.parse(reply.text).url).toBe("http://registry.example:5000/v2/_test/echo");
  });

  httpOnly("answers a throwing handler with a 500 and keeps serving", async () => {
    const reply = await server.send({ path: "/v2/_test/throw" });
    expect(reply.status).toBe(500);
    expect(reply.text).not.toContain("boom");
    expect(JSON.parse(reply.text)).toHaveProperty("errors");
    expect((await server.send({ path: "/v2/_test/echo" })).status).toBe(200);
  });

  httpOnly("cuts the connection when the response body fails, and keeps serving", async () => {
    await expect(server.send({ path: "/v2/_test/broken-body" })).rejects.toThrow();
    expect((await server.send({ path: "/v2/_test/echo" })).status).toBe(200);
  });

  httpOnly("handles Expect: 100-continue on a whole-body PUT", async () => {
    const socket = await rawConnect(server.url);
    const reader = collect(socket);
    const body = Buffer.alloc(300_000, 7);
    socket.write(
      `PUT /v2/_test/hash HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n` +
        `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await reader.until(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    socket.write(body);
    const text = await reader.until(/"size":300000\}/);
    socket.destroy();
    expect(text).toMatch(/HTTP\/1\.1 201 Created/);
  });

  httpOnly("reaches request.signal when the client aborts mid-upload", async () => {
    const socket = await rawConnect(server.url);
    collect(socket);
    socket.write(`POST /v2/_test/abort HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000\r\n\r\n`);
    socket.write(Buffer.alloc(1_000_000));
    await seen.abortStarted;
    socket.destroy();
    const reason = await Promise.race([
      seen.aborted,
      new Promise<string>((_, reject) => setTimeout(() => reject(new Error("request.signal never fired")), 5000)),
    ]);
    expect(reason).toBeTruthy();
  });

  httpOnly("rejects a request without Host (HTTP/1.1 and HTTP/1.0) with 400", async () => {
    expect(await rawExchange(server.url, "GET /v2/_test/echo HTTP/1.1\r\n\r\n", /\r\n\r\n/)).toMatch(/^HTTP\/1\.[01] 400/);
    expect(await rawExchange(server.url, "GET /v2/_test/echo HTTP/1.0\r\n\r\n", /\r\n\r\n/)).toMatch(/^HTTP\/1\.[01] 400/);
  });

  httpOnly.each(["bad host", "user@evil.example", "evil.example/path", "[zz]", "a.example:99999", "a.example:"])(
    "rejects the invalid Host %j with 400",
    async (host) => {
      const text = await rawExchange(server.url, `GET /v2/_test/echo HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(text).toMatch(/^HTTP\/1\.1 400/);
    },
  );

  httpOnly("answers a TLS ClientHello with an HTTP/1.1 400 (skopeo's https-then-http fallback)", async () => {
    expect(await rawExchange(server.url, TLS_CLIENT_HELLO)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  });
});
