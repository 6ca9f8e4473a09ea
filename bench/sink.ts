/**
 * A webhook sink on loopback for the benchmarks (`RK_BENCH_NOTIFY`, see
 * bench/server.ts): answers 200 to every POST and counts the events. It runs
 * on the two cores it measures, so it does as little as an HTTP receiver can
 * (as wrk and curl are the bench's clients for the same reason): a `node:net`
 * server reads HTTP/1.1 requests with a `Content-Length` body (what
 * `nodeWebhookPost` sends), checks each body's envelope framing and counts
 * `timestamp":` (the end of one key per event; JSON escapes a quote inside a
 * string, so it is found nowhere else in registry-kit's envelopes) chunk by
 * chunk, without parsing the JSON or joining the chunks. The mark starts with
 * a letter, not a quote: `Buffer#indexOf` finds candidates by its first byte,
 * and JSON is full of quotes (0.16 against 0.26 ms an envelope).
 * Per envelope of 1000 pulls (650 KB) sent one at a time, the node:http sink
 * this replaces cost 0.7-1.0 ms of CPU (up to half of it the kernel's, for
 * the joined copy), this one 0.35-0.4, of which ~0.16 is the count; beside
 * wrk and the registry, 1.1-1.6 µs against 0.6-1.0 a pulled manifest.
 */
import { createServer, type Socket } from "node:net";

/** A running sink. */
export interface Sink {
  url: string;
  /** Events received so far. */
  events(): number;
  /** Bodies that were not an envelope, and requests it could not read (answered 400). */
  malformed(): number;
  close(): void;
}

const MARK = Buffer.from('timestamp":');
const OPEN = Buffer.from('{"events":[');
const CLOSE = Buffer.from("]}");
const HEAD_END = Buffer.from("\r\n\r\n");
/** A request head longer than this is refused (the registry's are ~200 bytes). */
const MAX_HEAD = 16 * 1024;
const OK = Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
const CONTINUE = Buffer.from("HTTP/1.1 100 Continue\r\n\r\n");
const BAD = Buffer.from("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");

export async function startSink(): Promise<Sink> {
  let events = 0;
  let malformed = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    /** A head not yet complete; undefined while reading a body. */
    let head: Buffer | undefined = Buffer.alloc(0);
    let left = 0;
    /** The body's first bytes (for the framing check) and the last two seen. */
    let first: Buffer = Buffer.alloc(0);
    let last: Buffer = Buffer.alloc(0);
    /** The end of the last chunk, where a mark may begin. */
    let carry: Buffer | undefined;
    const count = (chunk: Buffer): void => {
      if (first.length < OPEN.length) first = Buffer.concat([first, chunk.subarray(0, OPEN.length - first.length)]);
      last = chunk.length >= CLOSE.length ? chunk.subarray(-CLOSE.length) : Buffer.concat([last, chunk]).subarray(-CLOSE.length);
      if (carry && chunk.length < MARK.length) {
        // A chunk shorter than the mark (rare): searched together with the bytes carried over.
        chunk = Buffer.concat([carry, chunk]);
        carry = undefined;
      }
      // A mark that began in the bytes carried over; then the marks of this chunk, after it.
      let after = 0;
      if (carry) {
        const at = Buffer.concat([carry, chunk.subarray(0, MARK.length - 1)]).indexOf(MARK);
        if (at >= 0 && at < carry.length) {
          events++;
          after = at + MARK.length - carry.length;
        }
      }
      for (let at = chunk.indexOf(MARK, after); at >= 0; at = chunk.indexOf(MARK, after)) {
        events++;
        after = at + MARK.length;
      }
      carry = chunk.subarray(Math.max(after, chunk.length - (MARK.length - 1)));
    };
    const endBody = (): void => {
      if (!first.equals(OPEN) || !last.equals(CLOSE)) malformed++;
      socket.write(OK);
      head = Buffer.alloc(0);
    };
    socket.on("data", (data: Buffer) => {
      let chunk = data;
      while (chunk.length > 0) {
        if (head !== undefined) {
          const bytes = head.length > 0 ? Buffer.concat([head, chunk]) : chunk;
          const end = bytes.indexOf(HEAD_END);
          if (end < 0) {
            if (bytes.length > MAX_HEAD) return refuse(socket);
            head = bytes;
            return;
          }
          const lines = bytes.toString("latin1", 0, end);
          const length = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i.exec(lines);
          if (!lines.startsWith("POST ") || !length || /\r\ntransfer-encoding:/i.test(lines)) return refuse(socket);
          if (/\r\nexpect:[ \t]*100-continue/i.test(lines)) socket.write(CONTINUE);
          head = undefined;
          left = Number(length[1]);
          first = Buffer.alloc(0);
          last = Buffer.alloc(0);
          carry = undefined;
          chunk = bytes.subarray(end + HEAD_END.length);
          if (left === 0) endBody();
          continue;
        }
        const take = Math.min(left, chunk.length);
        count(chunk.subarray(0, take));
        left -= take;
        chunk = chunk.subarray(take);
        if (left === 0) endBody();
      }
    });
  });
  const refuse = (socket: Socket): void => {
    malformed++;
    socket.end(BAD);
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/events`,
    events: () => events,
    malformed: () => malformed,
    close: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}
