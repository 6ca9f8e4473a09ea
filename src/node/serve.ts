/**
 * A ready-to-run Node server for a fetch handler: `node:http`, or with TLS
 * `node:http2` (HTTP/2 and HTTP/1.1 by ALPN) or `node:https`, and optionally
 * cleartext HTTP/2 beside HTTP/1.1.
 *
 * @module
 */
import { createServer, type Server, type ServerOptions } from "node:http";
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from "node:http2";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { acceptH2c } from "./h2c.js";
import { createNodeListeners, type FetchHandler, type NodeListenerOptions, type NodeListeners } from "./listener.js";
import { closeHttpServer, trackHttp2Secure } from "./shutdown.js";
import { answerPlainHttp, resolveTls, type ServeTlsOptions } from "./tls.js";

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
  /** Further `http.createServer` options (e.g. `maxHeaderSize`); these win over the defaults above. Not used for HTTP/2 over TLS. */
  serverOptions?: ServerOptions;
  /**
   * Serve https with this certificate and key; with client CAs, only to
   * clients presenting a certificate they signed. Start-up fails with a
   * `TlsConfigError` when a file cannot be read or OpenSSL refuses a value.
   */
  tls?: ServeTlsOptions;
  /**
   * With `tls`: offer HTTP/2 by ALPN, HTTP/1.1 staying available to clients
   * that do not ask for it. Default `true` (as Distribution); `false` serves
   * HTTP/1.1 only. Ignored without `tls` (see {@link ServeOptions.h2c}).
   */
  http2?: boolean;
  /**
   * Without `tls`: also accept cleartext HTTP/2 with prior knowledge ("h2c")
   * on the same port as HTTP/1.1 (Distribution's `http.h2c.enabled`).
   * Default `false`. Not allowed together with `tls`.
   */
  h2c?: boolean;
}

/** The server {@link serve} listens with: `http` (also for h2c), `https`, or `http2` with TLS. */
export type NodeServer = Server | HttpsServer | Http2SecureServer;

/** What {@link serve} resolves to. */
export interface RunningServer {
  /**
   * The underlying server. Every request, HTTP/1.1 or HTTP/2, is emitted on
   * it as `request` (or `checkContinue`).
   */
  server: NodeServer;
  /** Base URL, e.g. `http://127.0.0.1:41233` or `https://…` with TLS (IPv6 hosts in brackets). */
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
 * Serve `handler` with `node:http` (or `node:http2`/`node:https` with
 * {@link ServeOptions.tls}). Installs the deferred `100 Continue` listener
 * (see {@link createNodeListeners}) and keeps Node's default `clientError`
 * handling of plain http, which answers garbage (such as a TLS ClientHello
 * sent by a client that tries https first) with `400 Bad Request`, the
 * answer skopeo needs to fall back to plain http. With TLS, plain HTTP sent to
 * the port gets Go's `400` "Client sent an HTTP request to an HTTPS server."
 * (see `answerPlainHttp`), as from Distribution.
 */
export async function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<RunningServer> {
  if (options.tls && options.h2c) throw new TypeError("serve(): h2c is cleartext HTTP/2; with tls, HTTP/2 is negotiated (option http2)");
  const listeners = createNodeListeners(handler, options);
  const { server, close } = options.tls ? await secureServer(listeners, options) : plainServer(listeners, options);
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
    url: `${options.tls ? "https" : "http"}://${urlHost === "0.0.0.0" ? "127.0.0.1" : urlHost === "[::]" ? "[::1]" : urlHost}:${port}`,
    close: (timeoutMs = 10_000) => close(timeoutMs),
  };
}

interface Made {
  server: NodeServer;
  close(timeoutMs: number): Promise<void>;
}

function http1Options(options: ServeOptions): ServerOptions {
  return {
    requestTimeout: options.requestTimeout ?? 0,
    headersTimeout: options.headersTimeout ?? 60_000,
    keepAliveTimeout: options.keepAliveTimeout ?? 65_000,
    ...options.serverOptions,
  };
}

function plainServer(listeners: NodeListeners, options: ServeOptions): Made {
  const server = createServer(http1Options(options), listeners.request);
  server.on("checkContinue", listeners.checkContinue);
  const sessions = options.h2c ? acceptH2c(server) : new Set<Http2Session>();
  return { server, close: (timeoutMs) => closeHttpServer(server, sessions, timeoutMs) };
}

async function secureServer(listeners: NodeListeners, options: ServeOptions): Promise<Made> {
  const tls = await resolveTls(options.tls!);
  const firstBytesTimeout = options.headersTimeout ?? 60_000;
  if (options.http2 === false) {
    const server = createHttpsServer({ ...http1Options(options), ...tls }, listeners.request);
    server.on("checkContinue", listeners.checkContinue);
    const plain = answerPlainHttp(server, firstBytesTimeout);
    return { server, close: (timeoutMs) => (plain.destroyPending(), closeHttpServer(server, new Set(), timeoutMs)) };
  }
  // The compatibility API hands both HTTP/2 and HTTP/1.1 requests to the same listeners.
  const request = listeners.request as unknown as (req: Http2ServerRequest, res: Http2ServerResponse) => void;
  const server = createSecureServer({ ...tls, allowHTTP1: true }, request);
  // HTTP/1.1 through allowHTTP1 has Node's own limits (a 5-minute requestTimeout would cut large uploads).
  const { requestTimeout, headersTimeout, keepAliveTimeout } = http1Options(options);
  Object.assign(server, { requestTimeout, headersTimeout, keepAliveTimeout });
  server.on("checkContinue", listeners.checkContinue as unknown as typeof request);
  const closer = trackHttp2Secure(server);
  const plain = answerPlainHttp(server, firstBytesTimeout);
  return { server, close: (timeoutMs) => (plain.destroyPending(), closer.close(timeoutMs)) };
}
