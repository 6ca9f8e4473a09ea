/**
 * Distribution's `health.file`, `health.http` and `health.tcp` checks, for
 * `createHealthChecks()`: each resolves when healthy and rejects with
 * Distribution's message when not.
 *
 * @module
 */
import { stat } from "node:fs/promises";
import { connect } from "node:net";
import type { HttpHealthConfig, TcpHealthConfig } from "../config/config-debug.js";

/** Fails while `file` exists ("file exists"); passes when it is absent; other stat errors fail. */
export function fileCheck(file: string): () => Promise<void> {
  return async () => {
    try {
      await stat(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    throw new Error("file exists");
  };
}

/** A HEAD request to `uri` with `headers` must answer `statusCode` within `timeoutMs`. */
export function httpCheck(config: HttpHealthConfig): () => Promise<void> {
  return async () => {
    let response: Response;
    try {
      response = await fetch(config.uri, { method: "HEAD", headers: config.headers, signal: AbortSignal.timeout(config.timeoutMs), redirect: "manual" });
    } catch (error) {
      throw new Error(`${config.uri}: error while checking: ${(error as Error).message}`);
    }
    await response.body?.cancel();
    if (response.status !== config.statusCode) throw new Error(`${config.uri}: downstream service returned unexpected status: ${response.status}`);
  };
}

/** A TCP connection to `addr` must open within `timeoutMs` (it is closed at once). */
export function tcpCheck(config: TcpHealthConfig): () => Promise<void> {
  return () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host: config.target.host, port: config.target.port });
      const fail = (message: string) => {
        socket.destroy();
        reject(new Error(`${config.addr}: connection failed: ${message}`));
      };
      socket.setTimeout(config.timeoutMs, () => fail("timed out"));
      socket.once("error", (error) => fail(error.message));
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
    });
}
