/**
 * The TLS options of {@link serve}: certificate and key, client CAs, the
 * minimum version and the cipher list, read and checked before listening;
 * and the answer to plain HTTP sent to the TLS port.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import type { Socket } from "node:net";
import { createSecureContext, type SecureContextOptions, type SecureVersion, type Server as TlsServer } from "node:tls";

/** TLS for {@link serve}. Each PEM may be given inline or as a file to read at start-up. */
export interface ServeTlsOptions {
  /** The server certificate chain (PEM), leaf first. One of `cert` and `certFile` is required. */
  cert?: string | Uint8Array;
  /** A file holding the certificate chain (PEM). */
  certFile?: string;
  /** The private key (PEM). One of `key` and `keyFile` is required. */
  key?: string | Uint8Array;
  /** A file holding the private key (PEM). */
  keyFile?: string;
  /**
   * CA certificates (PEM) that client certificates must chain to. When any is
   * given (here or in `clientCaFiles`), every client must present a
   * certificate signed by one of them: the handshake fails otherwise.
   */
  clientCa?: (string | Uint8Array)[];
  /** Files of client CA certificates (PEM), as `clientCa`. */
  clientCaFiles?: string[];
  /** The lowest protocol version accepted. Default `"TLSv1.2"` (as Distribution). */
  minVersion?: SecureVersion;
  /**
   * OpenSSL cipher list (`"ECDHE-RSA-AES128-GCM-SHA256:..."`); TLS 1.3 suite
   * names (`TLS_AES_128_GCM_SHA256`) may be included. Default: Node's.
   */
  ciphers?: string;
}

/** A TLS option that cannot be used: a file not readable, a PEM or cipher list OpenSSL refuses. */
export class TlsConfigError extends Error {
  /** Always `"TlsConfigError"`. */
  override readonly name = "TlsConfigError";
}

/** What `https`/`http2` secure servers take, with client verification set when CAs are given. */
export type ResolvedTls = SecureContextOptions & { requestCert: boolean; rejectUnauthorized: boolean };

/** Read the files of `tls`, check that OpenSSL accepts the whole and return the server options. */
export async function resolveTls(tls: ServeTlsOptions): Promise<ResolvedTls> {
  const cert = tls.cert ?? (tls.certFile !== undefined ? await pemFile("certificate", tls.certFile) : undefined);
  const key = tls.key ?? (tls.keyFile !== undefined ? await pemFile("key", tls.keyFile) : undefined);
  if (cert === undefined) throw new TlsConfigError("TLS needs a certificate (cert or certFile)");
  if (key === undefined) throw new TlsConfigError("TLS needs a private key (key or keyFile)");
  const ca = [...(tls.clientCa ?? [])];
  for (const file of tls.clientCaFiles ?? []) ca.push(await pemFile("client CA", file));
  const options: ResolvedTls = {
    cert: pem(cert),
    key: pem(key),
    minVersion: tls.minVersion ?? "TLSv1.2",
    requestCert: ca.length > 0,
    rejectUnauthorized: ca.length > 0,
    ...(ca.length > 0 ? { ca: ca.map(pem) } : {}),
    ...(tls.ciphers !== undefined ? { ciphers: tls.ciphers } : {}),
  };
  try {
    // Throws on a PEM that does not parse, a key that does not match, an unknown cipher.
    createSecureContext(options);
  } catch (error) {
    throw new TlsConfigError(`TLS options refused by OpenSSL: ${(error as Error).message}`);
  }
  return options;
}

function pem(value: string | Uint8Array): string | Buffer {
  return typeof value === "string" ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

async function pemFile(what: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new TlsConfigError(`cannot read the TLS ${what} file ${file}: ${code ?? (error as Error).message}`);
  }
}

/**
 * Go's answer to plain HTTP on a TLS port, byte for byte (net/http's
 * `conn.serve`), which Distribution sends: a client pointed at `http://` by
 * mistake gets a reason instead of an empty reply.
 */
export const PLAIN_HTTP_ANSWER = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/** The first five bytes Go takes for plain HTTP (`tlsRecordHeaderLooksLikeHTTP`). */
const HTTP_STARTS = new Set(["GET /", "HEAD ", "POST ", "PUT /", "OPTIO"]);

/** A TLS record of type handshake: a ClientHello starts so. */
const TLS_HANDSHAKE = 0x16;

/** What {@link answerPlainHttp} gives back, for shutdown. */
export interface PlainHttpGuard {
  /** Drop the connections still waiting for their first bytes (they are no request yet). */
  destroyPending(): void;
}

/**
 * Look at the first bytes of every connection to `server` before TLS sees
 * them: a TLS handshake (or anything but plain HTTP) goes on to the server's
 * own TLS listener with the bytes put back (Node's `TLSSocket` reads what a
 * socket holds); a plain HTTP request line gets {@link PLAIN_HTTP_ANSWER} and
 * the connection is closed. A connection that sends nothing is dropped after
 * `firstBytesTimeoutMs`, as the TLS handshake timeout would.
 */
export function answerPlainHttp(server: TlsServer, firstBytesTimeoutMs: number): PlainHttpGuard {
  const tlsListeners = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  const pending = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    pending.add(socket);
    let head: Buffer = Buffer.alloc(0);
    const done = (): void => {
      pending.delete(socket);
      socket.off("data", onData);
      socket.setTimeout(0);
    };
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      if (head[0] !== TLS_HANDSHAKE && head.length < 5) return; // Go reads the whole 5-byte record header
      done();
      socket.pause();
      if (head[0] !== TLS_HANDSHAKE && HTTP_STARTS.has(head.subarray(0, 5).toString("latin1"))) {
        socket.end(PLAIN_HTTP_ANSWER);
        return;
      }
      socket.unshift(head);
      for (const listener of tlsListeners) listener.call(server, socket);
    };
    socket.on("data", onData);
    socket.once("close", () => pending.delete(socket));
    socket.setTimeout(firstBytesTimeoutMs, () => socket.destroy());
  });
  return {
    destroyPending: () => {
      for (const socket of pending) socket.destroy();
      pending.clear();
    },
  };
}
