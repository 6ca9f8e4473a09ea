/** What only registry-kit's own node:http server does beyond the shared matrix. */
import { afterEach, describe, expect, it } from "vitest";
import { parseHost, serve, toNodeListener, type RunningServer } from "../../src/node/index.js";
import { createTestHandler } from "./test-handler.js";
import { collect, rawConnect } from "./raw.js";
import { sendHttp } from "./targets.js";

describe("parseHost", () => {
  it.each([
    ["registry.example", "registry.example"],
    ["Registry.Example:5000", "registry.example:5000"],
    ["127.0.0.1:80", "127.0.0.1:80"],
    ["[::1]:5000", "[::1]:5000"],
    ["[::1]", "[::1]"],
    ["my_host", "my_host"],
  ])("accepts %j", (value, expected) => {
    expect(parseHost(value)).toBe(expected);
  });
  it("answers a repeated value as the first time (valid or not)", () => {
    for (let i = 0; i < 3; i++) {
      expect(parseHost("Repeat.Example:5000")).toBe("repeat.example:5000");
      expect(parseHost("Repeat.Example:5000")).toBe("repeat.example:5000");
      expect(parseHost("bad host")).toBeUndefined();
      expect(parseHost("bad host")).toBeUndefined();
    }
  });
  it.each(["", " ", "a b", "a@b", "a/b", "a?b", "a#b", "[zz]", "a:", "a:99999", "a:-1", ":80", "-a", "a\\b", "[::1", undefined])(
    "refuses %j",
    (value) => {
      expect(parseHost(value)).toBeUndefined();
    },
  );
});

describe("serve", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close(500);
    running = undefined;
  });

  it("listens on 127.0.0.1 and a free port by default, with upload-friendly timeouts", async () => {
    running = await serve(createTestHandler().handler);
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const server = running.server as import("node:http").Server;
    expect(server.requestTimeout).toBe(0);
    expect(server.headersTimeout).toBe(60_000);
  });

  it("sends 100 Continue only when the handler reads the body, and closes after a refusal", async () => {
    const t = createTestHandler();
    running = await serve(t.handler);
    const socket = await rawConnect(running.url);
    const reader = collect(socket);
    socket.write(`PUT /v2/_test/no-read HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n`);
    const text = await reader.until("end");
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(text).not.toContain("100 Continue");
    expect(text.toLowerCase()).toContain("connection: close");
    expect(t.seen.noReadCalls).toBe(1);
  });

  it("close() lets an in-flight request finish", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    running = await serve(async () => {
      await gate;
      return new Response("finished");
    });
    const reply = sendHttp(running.url, { path: "/" });
    await new Promise((r) => setTimeout(r, 50));
    const closed = running.close(5000);
    setTimeout(release, 50);
    expect((await reply).text).toBe("finished");
    await closed;
    running = undefined;
  });

  /** Serve `handler`, send a GET and leave after 50 ms; resolves to what the handler reported. */
  async function afterClientLeaves(handler: (request: Request, report: (aborted: boolean) => void) => Promise<Response>): Promise<boolean> {
    let report!: (aborted: boolean) => void;
    const seen = new Promise<boolean>((r) => (report = r));
    running = await serve((request) => handler(request, report));
    const socket = await rawConnect(running.url);
    socket.write(`GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    return seen;
  }

  it("gives a handler that first reads request.signal after the client left an aborted signal", async () => {
    const aborted = await afterClientLeaves(async (request, report) => {
      await new Promise((r) => setTimeout(r, 300));
      report(request.signal.aborted);
      return new Response("late");
    });
    expect(aborted).toBe(true);
  });

  it("gives a handler that reads request.signal early one that aborts when the client leaves", async () => {
    const aborted = await afterClientLeaves(async (request, report) => {
      const signal = request.signal;
      expect(signal.aborted).toBe(false);
      await new Promise<void>((r) => signal.addEventListener("abort", () => r()));
      report(signal.aborted);
      return new Response("gone");
    });
    expect(aborted).toBe(true);
  });

  it("toNodeListener reports handler failures to the log hook", async () => {
    const events: unknown[] = [];
    const listener = toNodeListener(() => Promise.reject(new Error("nope")), { log: (e) => events.push(e) });
    const { createServer } = await import("node:http");
    const server = createServer(listener);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const reply = await sendHttp(`http://127.0.0.1:${port}`, { path: "/x" });
    server.close();
    expect(reply.status).toBe(500);
    expect(events).toEqual([expect.objectContaining({ level: "error", msg: "handler threw" })]);
  });
});
