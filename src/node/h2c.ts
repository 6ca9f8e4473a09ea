/**
 * Cleartext HTTP/2 ("h2c", prior knowledge) and HTTP/1.1 on one port: the
 * first bytes of a connection decide which server gets it.
 *
 * @module
 */
import type { Server } from "node:http";
import { createServer as createH2Server, type Http2Server, type Http2Session } from "node:http2";
import type { Socket } from "node:net";

/** The connection preface every HTTP/2 client sends first (RFC 9113, 3.4). */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * Make `server` (a `node:http` server) also accept HTTP/2 with prior
 * knowledge: a connection that starts with the HTTP/2 preface goes to an
 * `http2` server whose requests are emitted on `server` as its own
 * (`request`, `checkContinue`), every other one to `server`'s own HTTP/1.1
 * parser. Returns the open HTTP/2 sessions, for shutdown.
 */
export function acceptH2c(server: Server): Set<Http2Session> {
  const h2: Http2Server = createH2Server();
  const sessions = new Set<Http2Session>();
  h2.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  h2.on("request", (req, res) => server.emit("request", req, res));
  h2.on("checkContinue", (req, res) => server.emit("checkContinue", req, res));
  const http1 = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const h2Start = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (h2Start && seen.length < PREFACE.length) return; // wait for the rest of the preface
      socket.off("data", onData);
      socket.pause();
      socket.unshift(seen);
      // The HTTP/2 session reads what is buffered itself (and then the socket's handle).
      if (h2Start) h2.emit("connection", socket);
      else {
        for (const listener of http1) listener.call(server, socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  return sessions;
}
