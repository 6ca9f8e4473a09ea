/**
 * The bench's webhook sink (bench/sink.ts) reads HTTP by hand to stay cheap on
 * the cores it measures: its event count must stay exact however the bytes
 * arrive, and what it cannot read must be refused, not miscounted.
 */
import { connect } from "node:net";
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startSink, type Sink } from "../../bench/sink.js";

const envelope = (n: number): string => `{"events":[${Array.from({ length: n }, (_, i) => `{"id":"${i}","timestamp":"2026-11-24T12:00:00.000Z","action":"pull"}`).join(",")}]}`;

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-length": String(Buffer.byteLength(body)), ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** One POST written `step` bytes at a time, each write in its own turn; resolves with the answer's first bytes. */
async function postInPieces(url: string, body: Buffer, step: number): Promise<string> {
  const socket = connect(Number(new URL(url).port), "127.0.0.1");
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once("connect", resolve));
  const bytes = Buffer.concat([Buffer.from(`POST /events HTTP/1.1\r\nHost: sink\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
  const answer = new Promise<string>((resolve) => socket.once("data", (data: Buffer) => resolve(data.toString("latin1"))));
  for (let at = 0; at < bytes.length; at += step) {
    socket.write(bytes.subarray(at, at + step));
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  const text = await answer;
  socket.destroy();
  return text;
}

describe("bench sink", () => {
  let sink: Sink | undefined;
  afterEach(() => sink?.close());

  it("answers 200 and counts every event of envelopes sent whole, over one kept-alive connection", async () => {
    sink = await startSink();
    expect(await post(sink.url, envelope(3))).toBe(200);
    expect(await post(sink.url, envelope(5000))).toBe(200);
    expect(await post(sink.url, envelope(2), { expect: "100-continue" })).toBe(200);
    expect(sink.events()).toBe(5005);
    expect(sink.malformed()).toBe(0);
  });

  it("counts exactly when the body arrives in pieces of any size, marks cut between them", async () => {
    sink = await startSink();
    const body = Buffer.from(envelope(7));
    let sent = 0;
    for (const step of [1, 5, 11, 12, 13, 50, 997]) {
      expect(await postInPieces(sink.url, body, step)).toMatch(/^HTTP\/1\.1 200 /);
      sent += 7;
      expect(sink.events(), `pieces of ${step} bytes`).toBe(sent);
    }
    expect(sink.malformed()).toBe(0);
  });

  it("counts a body that is not an envelope as malformed, and refuses a chunked body with 400", async () => {
    sink = await startSink();
    expect(await post(sink.url, "not an envelope")).toBe(200);
    expect(sink.malformed()).toBe(1);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(sink!.url, { method: "POST" }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.write(envelope(1));
      req.end();
    });
    expect(status).toBe(400);
    expect(sink.malformed()).toBe(2);
    expect(sink.events()).toBe(0);
  });
});
