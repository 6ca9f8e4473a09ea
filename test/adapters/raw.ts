/** Raw TCP exchanges, for what an HTTP client library would hide. */
import { connect, type Socket } from "node:net";

/** Connect to the server behind `base` (an `http://host:port` URL). */
export function rawConnect(base: string): Promise<Socket> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Collects what a socket receives; `until` waits for a pattern or the end. */
export function collect(socket: Socket): { text(): string; until(pattern: RegExp | "end", timeoutMs?: number): Promise<string> } {
  let received = "";
  let ended = false;
  const waiters: (() => void)[] = [];
  const wake = (): void => waiters.splice(0).forEach((w) => w());
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
    wake();
  });
  socket.on("close", () => {
    ended = true;
    wake();
  });
  socket.on("error", () => {});
  return {
    text: () => received,
    until(pattern, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out; received so far: ${JSON.stringify(received)}`)), timeoutMs);
        const check = (): void => {
          if (pattern === "end" ? ended : pattern.test(received)) {
            clearTimeout(timer);
            resolve(received);
          } else if (ended) {
            clearTimeout(timer);
            reject(new Error(`connection closed; received: ${JSON.stringify(received)}`));
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

/** Write `bytes`, then read until the server closes the connection (or `pattern` shows up). */
export async function rawExchange(base: string, bytes: string | Buffer, pattern: RegExp | "end" = "end"): Promise<string> {
  const socket = await rawConnect(base);
  const reader = collect(socket);
  socket.write(bytes);
  try {
    return await reader.until(pattern);
  } finally {
    socket.destroy();
  }
}

/** The first bytes of a TLS 1.2/1.3 ClientHello record, as an https client sends them. */
export const TLS_CLIENT_HELLO = Buffer.from([
  0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03,
  ...Array.from({ length: 32 }, (_, i) => i),
  0x00, 0x00, 0x02, 0x13, 0x01, 0x01, 0x00,
]);
