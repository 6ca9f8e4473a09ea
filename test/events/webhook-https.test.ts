/**
 * `nodeWebhookPost` over https, against a real TLS server on loopback with a
 * certificate from a test CA (openssl): trusted through NODE_EXTRA_CA_CERTS
 * it delivers the body and headers as sent and keeps one TLS connection for
 * both POSTs; without that CA it refuses the server and never sends the body.
 * Each case runs in a child process, because a process reads its extra CAs at
 * start; both from the calling thread and from the worker thread.
 */
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCerts, type Certs } from "../adapters/certs.js";

const CHILD = fileURLToPath(new URL("./fixtures/https-post.ts", import.meta.url));
const BODY = '{"events":[{"id":"e-1","action":"pull"}]}';

let certs: Certs;
let server: Server;
let url: string;
const received: { body: string; authorization?: string; contentType?: string }[] = [];
let tlsConnections = 0;

beforeAll(async () => {
  certs = makeCerts();
  server = createServer({ key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString(), authorization: req.headers.authorization, contentType: req.headers["content-type"] });
      res.end();
    });
  });
  server.on("secureConnection", () => tlsConnections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  certs.remove();
});

function runChild(mode: string, env: NodeJS.ProcessEnv): Promise<{ statuses?: number[]; error?: string; code?: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--import", "tsx", CHILD, url, BODY, mode], { env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`child failed: ${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split("\n").at(-1)!));
    });
  });
}

describe.each(["caller", "worker"])("nodeWebhookPost over https, from the %s thread", (mode) => {
  it("delivers to a server whose CA the process trusts, body and headers as sent, both POSTs on one TLS connection", async () => {
    received.length = 0;
    tlsConnections = 0;
    const out = await runChild(mode, { NODE_EXTRA_CA_CERTS: certs.ca });
    expect(out).toEqual({ statuses: [200, 200] });
    expect(received).toEqual([
      { body: BODY, authorization: "Bearer hook-secret", contentType: "application/vnd.docker.distribution.events.v1+json" },
      { body: BODY, authorization: "Bearer hook-secret", contentType: "application/vnd.docker.distribution.events.v1+json" },
    ]);
    expect(tlsConnections).toBe(1);
  });

  it("refuses a server whose certificate no trusted CA signed, and sends it nothing", async () => {
    received.length = 0;
    // Another CA in the extra store: the server's own is trusted nowhere.
    const out = await runChild(mode, { NODE_EXTRA_CA_CERTS: certs.otherCa });
    expect(out.statuses).toBeUndefined();
    expect(out.code).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    expect(received).toEqual([]);
  });
});
