/**
 * A ready-to-run `node:http` server for a fetch handler.
 *
 * @module
 */
import { createServer, type Server, type ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeListeners, type FetchHandler, type NodeListenerOptions } from "./listener.js";

/** Options of {@link serve}. */
export interface ServeOptions extends NodeListenerOptions {
  /** Interface to listen on. Default `"127.0.0.1"` (loopback only). */
  host?: string;
  /** Port; `0` (the default) picks a free one, see {@link RunningServer.url}. */
  port?: number;
  /**
   * Milliseconds a whole request may take. Default `0` (no limit), because a
   * multi-GB layer upload can legitimately take very long; stalled connections
   * are still dropped by {@link ServeOptions.headersTimeout} and the socket idle timeout.
   */
  requestTimeout?: number;
  /** Milliseconds to receive the request headers. Default 60 000. */
  headersTimeout?: number;
  /** Milliseconds an idle keep-alive connection stays open. Default 65 000 (longer than common load balancers' 60 s). */
  keepAliveTimeout?: number;
  /** Milliseconds without any socket activity before the connection is closed. Default 600 000; `0` disables. */
  idleTimeout?: number;
  /** Further `http.createServer` options (e.g. `maxHeaderSize`); these win over the defaults above. */
  serverOptions?: ServerOptions;
}

/** What {@link serve} resolves to. */
export interface RunningServer {
  /** The underlying server. */
  server: Server;
  /** Base URL, e.g. `http://127.0.0.1:41233` (IPv6 hosts in brackets). */
  url: string;
  /** The port actually bound. */
  port: number;
  /**
   * Stop accepting connections, close idle keep-alive connections, let
   * in-flight requests finish for up to `timeoutMs` (default 10 000), then cut
   * the rest. Resolves once the server is closed.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * Serve `handler` with `node:http`. Installs the deferred `100 Continue`
 * listener (see {@link createNodeListeners}) and keeps Node's default
 * `clientError` handling, which answers garbage (such as a TLS ClientHello
 * sent by a client that tries https first) with `400 Bad Request`, the
 * answer skopeo needs to fall back to plain http.
 */
export async function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<RunningServer> {
  const listeners = createNodeListeners(handler, options);
  const server = createServer({
    requestTimeout: options.requestTimeout ?? 0,
    headersTimeout: options.headersTimeout ?? 60_000,
    keepAliveTimeout: options.keepAliveTimeout ?? 65_000,
    ...options.serverOptions,
  }, listeners.request);
  server.on("checkContinue", listeners.checkContinue);
  server.setTimeout(options.idleTimeout ?? 600_000);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    server,
    port,
    url: `http://${urlHost === "0.0.0.0" ? "127.0.0.1" : urlHost === "[::]" ? "[::1]" : urlHost}:${port}`,
    close: (timeoutMs = 10_000) => closeServer(server, timeoutMs),
  };
}

function closeServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
