/**
 * Graceful shutdown of the servers {@link serve} makes: stop accepting, let
 * in-flight requests finish, close idle connections, cut the rest after a
 * timeout. `node:http` and `node:https` servers do the bookkeeping themselves;
 * an `http2` secure server (HTTP/2 sessions plus HTTP/1.1 connections through
 * `allowHTTP1`) needs it done here.
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Http2SecureServer, Http2Session } from "node:http2";
import type { Socket } from "node:net";

/** Close an `http`/`https` server (and the h2c sessions it hands out). */
export function closeHttpServer(server: Server, sessions: Set<Http2Session>, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => {
      server.closeAllConnections();
      for (const session of sessions) session.destroy();
    }, timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
    for (const session of sessions) session.close();
  });
}

/** What {@link trackHttp2Secure} gives back: the closer of the server. */
export interface Http2SecureCloser {
  /** As `RunningServer.close`. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Track the sessions and HTTP/1.1 connections of `server` so that
 * {@link Http2SecureCloser.close} can end them: HTTP/2 sessions get a GOAWAY
 * (open streams finish), HTTP/1.1 connections that carried a request are
 * ended as soon as they carry none (only their requests tell them apart from
 * HTTP/2 sockets: a session's `socket` is a proxy).
 */
export function trackHttp2Secure(server: Http2SecureServer): Http2SecureCloser {
  const sessions = new Set<Http2Session>();
  const http1 = new Map<Socket, number>(); // socket → requests in flight
  let closing = false;
  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    if (closing) session.close();
  });
  const track = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.httpVersionMajor !== 1) return;
    const socket = req.socket;
    if (!http1.has(socket)) socket.once("close", () => http1.delete(socket));
    http1.set(socket, (http1.get(socket) ?? 0) + 1);
    // The response's close, not the request's: the answer is what must be out.
    res.once("close", () => {
      const left = (http1.get(socket) ?? 1) - 1;
      http1.set(socket, left);
      if (closing && left === 0) socket.end();
    });
  };
  server.prependListener("request", track);
  server.prependListener("checkContinue", track);
  return {
    close: (timeoutMs) =>
      new Promise((resolve) => {
        if (!server.listening) return resolve();
        closing = true;
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy();
          for (const socket of http1.keys()) socket.destroy();
        }, timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        for (const session of sessions) session.close();
        // HTTP/1.1 connections that never carried a request are closed by Node (allowHTTP1 tracks them).
        for (const [socket, inFlight] of http1) if (inFlight === 0) socket.end();
      }),
  };
}
