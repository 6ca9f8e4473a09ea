/**
 * `nodeWebhookPost({ worker: true })` (src/events/webhook-worker.node.ts):
 * envelopes POSTed by a worker thread against real servers on loopback. What
 * is sent, one kept-alive connection, a POST given up by its signal, errors
 * with their codes, and a thread that holds the process open only while a
 * POST is under way (in a child process, which must end by itself).
 */
import { execFile } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { nodeWebhookPost } from "../../src/node/index.js";

const post = nodeWebhookPost({ worker: true });
const BODY = new TextEncoder().encode('{"events":[{"id":"e-1","action":"pull"}]}');
const HEADERS: [string, string][] = [["Content-Type", "application/vnd.docker.distribution.events.v1+json"], ["Authorization", "Bearer hook-secret"]];

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A server on loopback answering `status` after `delayMs` ("never": it does not answer). */
async function receiver(status: number, delayMs: number | "never" = 0): Promise<{ url: string; received: Received[]; connections: () => number; closed: () => number }> {
  const received: Received[] = [];
  let connections = 0;
  let closed = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (delayMs !== "never") setTimeout(() => res.writeHead(status).end("ignored body"), delayMs);
    });
  });
  server.on("connection", (socket) => {
    connections++;
    socket.on("close", () => closed++);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, received, connections: () => connections, closed: () => closed };
}

describe("nodeWebhookPost from a worker thread", () => {
  it("sends the body and header lines as given, adds Host and Content-Length, resolves to the status; POSTs share one connection", async () => {
    const { url, received, connections } = await receiver(202);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await post(url, HEADERS, BODY, new AbortController().signal));
    expect(statuses).toEqual([202, 202, 202]);
    expect(received).toHaveLength(3);
    for (const { headers, body } of received) {
      expect(body).toBe(new TextDecoder().decode(BODY));
      expect(headers).toMatchObject({
        host: new URL(url).host,
        "content-length": String(BODY.length),
        "content-type": "application/vnd.docker.distribution.events.v1+json",
        authorization: "Bearer hook-secret",
      });
    }
    expect(connections()).toBe(1);
  });

  it("the caller's buffer is copied, not taken: it is still whole after the POST", async () => {
    const { url, received } = await receiver(200);
    const body = BODY.slice();
    await post(url, HEADERS, body, new AbortController().signal);
    expect(body.byteLength).toBe(BODY.byteLength);
    expect(received[0]!.body).toBe(new TextDecoder().decode(body));
  });

  it("a POST its signal gives up rejects at once with the signal's reason, and the worker drops its connection", async () => {
    const { url, received, closed } = await receiver(200, "never");
    const controller = new AbortController();
    const sent = post(url, HEADERS, BODY, controller.signal);
    while (received.length === 0) await new Promise((r) => setTimeout(r, 10));
    const reason = new Error("no answer within 50 ms");
    controller.abort(reason);
    await expect(sent).rejects.toBe(reason);
    const end = Date.now() + 5_000;
    while (closed() === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(closed()).toBe(1);
  });

  it("a signal aborted before the call rejects without sending", async () => {
    const { url, received, connections } = await receiver(200);
    const controller = new AbortController();
    controller.abort(new Error("already given up"));
    await expect(post(url, HEADERS, BODY, controller.signal)).rejects.toThrow("already given up");
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toEqual([]);
    expect(connections()).toBe(0);
  });

  it("a refused connection rejects with the socket error's message and code", async () => {
    const { url } = await receiver(200);
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()));
    await expect(post(url, HEADERS, BODY, new AbortController().signal)).rejects.toMatchObject({ code: "ECONNREFUSED", message: expect.stringContaining("ECONNREFUSED") });
  });

  it("holds the process open while a POST is under way, and not after it, nor after one it could not hand over (a child that ends by itself)", async () => {
    const { url, received } = await receiver(204, 500);
    const child = fileURLToPath(new URL("./fixtures/worker-post.ts", import.meta.url));
    const started = Date.now();
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ["--import", "tsx", child, url], { timeout: 20_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)));
    });
    // A detached body is refused at once; each answer came after 500 ms, the second POST made by a thread idle
    // (unreferenced) since the first: the child waited for both, then ended without process.exit.
    expect(out.trim()).toBe("DataCloneError 204 204");
    expect(received).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
  });
});
