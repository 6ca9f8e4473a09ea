/**
 * A webhook receiver on loopback for the notification tests: records every
 * envelope it accepts, and answers what `status()` says (500 to play a
 * failing endpoint, `"hang"` to never answer).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RegistryEvent } from "../../src/events/index.js";

export interface Receiver {
  url: string;
  /** Envelopes accepted (answered 200), in arrival order, with their Content-Type. */
  envelopes: { contentType: string | undefined; headers: IncomingMessage["headers"]; events: RegistryEvent[] }[];
  /** Every event accepted, in order. */
  events(): RegistryEvent[];
  /** Requests received, accepted or not. */
  attempts: number;
  /** The events of each envelope answered with an error status, in arrival order. */
  refused: RegistryEvent[][];
  /** What the next answers are. */
  answer: number | "hang";
  /** Envelopes with more events than this are answered 413 (Payload Too Large). */
  maxEvents: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<import("node:http").ServerResponse>();
  const receiver: Receiver = {
    url: "",
    envelopes: [],
    events: () => receiver.envelopes.flatMap((e) => e.events),
    attempts: 0,
    refused: [],
    answer: 200,
    maxEvents: Infinity,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      receiver.attempts += 1;
      if (receiver.answer === "hang") {
        hanging.add(res);
        return;
      }
      if (receiver.answer !== 200) {
        receiver.refused.push((JSON.parse(Buffer.concat(chunks).toString("utf8")) as { events: RegistryEvent[] }).events);
        res.writeHead(receiver.answer).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { events: RegistryEvent[] };
      if (body.events.length > receiver.maxEvents) {
        res.writeHead(413).end();
        return;
      }
      receiver.envelopes.push({ contentType: req.headers["content-type"], headers: req.headers, events: body.events });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return receiver;
}

/** Wait for `check` (a loaded machine may be slow); fail with `what` after `ms`. */
export async function waitFor(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
