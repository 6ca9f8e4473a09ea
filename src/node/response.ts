/**
 * WHATWG `Response` → Node `ServerResponse`, streaming with backpressure.
 *
 * @module
 */
import type { ServerResponse } from "node:http";
import { takeInMemoryBody, type InMemoryBody } from "../http/in-memory-response.js";
import { concatBytes } from "../util/bytes.js";

/**
 * In-memory responses wait here for the end of the event loop's current
 * turn (`setImmediate`), then are written together. A response written as
 * soon as it is ready goes out between the reads of the next requests, and
 * each write then wakes a client that has gone idle (a cross-CPU wake-up in
 * the kernel); written together, the writes of one turn find the clients
 * already awake. For a 401 challenge under wrk this cut the server's CPU per
 * request by a quarter (bench/compare.ts, docs/performance.md); the delay is
 * the rest of one turn of the loop.
 */
let queued: (() => void)[] = [];

function writeQueued(): void {
  const writes = queued;
  queued = [];
  for (const write of writes) write();
}

/**
 * Write `response` to `res`: status, headers (every `Set-Cookie` line kept),
 * then the body chunk by chunk, waiting for `'drain'` whenever `res.write`
 * returns false. A body of at most 64 KiB with a `Content-Length` is read
 * whole first and sent with the headers in one write. For HEAD (and 204/304) no body is sent, but the handler's
 * `Content-Length` is kept. Resolves when the response is finished or the
 * client has gone. A failing body stream destroys the socket (the client sees
 * a truncated response, never a wrong complete one) and the error is rethrown
 * for the caller to log. A response of registry-kit's in-memory kind
 * (manifests, JSON, errors) is written at the end of the event loop's current
 * turn, together with the others of that turn (see `queued` above); the
 * promise resolves once it is.
 */
export function writeResponse(response: Response, res: ServerResponse, method: string): Promise<void> {
  const bodiless = method === "HEAD" || response.status === 204 || response.status === 304;
  // Bytes a registry-kit handler kept in memory: no stream to read them back through,
  // and headers nobody touched are written as the handler gave them.
  const inMemory = takeInMemoryBody(response);
  return inMemory ? writeInMemory(response, res, inMemory, bodiless) : writeStreamed(response, res, bodiless);
}

/** An in-memory response, queued for the end of the turn (see `queued`): one promise, no async function around it. */
function writeInMemory(response: Response, res: ServerResponse, inMemory: InMemoryBody, bodiless: boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const raw = inMemory.headers ? flat(inMemory.headers) : headerList(response, res).raw;
    const write = (): void => {
      try {
        writeHead(res, response, raw);
        if (bodiless) res.end();
        else res.end(inMemory.bytes);
        resolve();
      } catch (error) {
        reject(error);
      }
    };
    if (queued.push(write) === 1) setImmediate(writeQueued);
  });
}

/** Any other response: its body read whole when small, else streamed. */
async function writeStreamed(response: Response, res: ServerResponse, bodiless: boolean): Promise<void> {
  const { raw, length } = headerList(response, res);
  const body = response.body;
  if (body === null || bodiless) {
    await body?.cancel().catch(() => {});
    writeHead(res, response, raw);
    res.end();
    return;
  }
  const size = length === undefined ? NaN : Number(length);
  if (size <= SMALL_BODY) {
    // A small body of announced size (manifests, JSON, errors): read it whole and
    // send headers and body in one write instead of streaming it chunk by chunk.
    let bytes: Uint8Array;
    try {
      bytes = await readSmall(body);
    } catch (error) {
      res.destroy();
      throw error;
    }
    writeHead(res, response, raw);
    res.end(bytes);
    return;
  }
  writeHead(res, response, raw);
  await pipeBody(body, res);
}

/**
 * The response's headers as one flat [name, value, ...] list for writeHead
 * (cheaper than a setHeader per header), and its Content-Length. Every
 * Set-Cookie line is kept, set apart as an array: writeHead's list would
 * collapse them into one when headers were already set on `res` (Express).
 */
function headerList(response: Response, res: ServerResponse): { raw: string[]; length: string | undefined } {
  const raw: string[] = [];
  let cookies = false;
  let length: string | undefined;
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") {
      cookies = true;
      continue;
    }
    if (name === "content-length") length = value;
    raw.push(name, value);
  }
  if (cookies) res.setHeader("set-cookie", response.headers.getSetCookie());
  return { raw, length };
}

function flat(pairs: Iterable<readonly [string, string]>): string[] {
  const raw: string[] = [];
  for (const [name, value] of pairs) raw.push(name, value);
  return raw;
}

/** Bodies up to this size with a `Content-Length` are sent in one write. */
const SMALL_BODY = 64 * 1024;

/**
 * Read a small body whole. A body built from bytes or a string arrives as one
 * chunk, sent as is; cheaper than `response.arrayBuffer()`, which copies it
 * through undici's body-mixin machinery.
 */
async function readSmall(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
  }
  return chunks.length === 1 ? chunks[0]! : concatBytes(chunks, total);
}

function writeHead(res: ServerResponse, response: Response, raw: string[]): void {
  if (res.req.httpVersionMajor === 2) return writeHead2(res, response, raw);
  if (response.statusText) res.writeHead(response.status, response.statusText, raw);
  else res.writeHead(response.status, raw);
}

/** Headers HTTP/2 forbids (RFC 9113, 8.2.2); Node throws on them. */
const CONNECTION_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

/** An HTTP/2 response (the compatibility API): no reason phrase, no connection-specific headers. */
function writeHead2(res: ServerResponse, response: Response, raw: string[]): void {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!CONNECTION_HEADERS.has(name)) kept.push(name, raw[i + 1]!);
  }
  res.writeHead(response.status, kept);
}

/** Size of the two buffers a byte-stream body is read into (see {@link pipeBytes}). */
const BYOB_CHUNK = 1024 * 1024;

async function pipeBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // not a byte stream: read the chunks it hands out
  }
  if (byob) return pipeBytes(byob, res);
  const reader = body.getReader();
  await whileConnected(res, reader, async (gone) => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (gone()) return;
      if (!res.write(value)) await drained(res);
      if (gone()) return;
    }
    res.end();
  });
}

/**
 * Run `pump` while the client is connected: when the response closes early the
 * body is cancelled (and `gone()` turns true), and when the body fails the
 * socket is destroyed so the client sees a cut transfer, not a short success.
 */
async function whileConnected(res: ServerResponse, reader: { cancel(): Promise<void> }, pump: (gone: () => boolean) => Promise<void>): Promise<void> {
  let gone = false;
  const onClose = (): void => {
    gone = true;
    reader.cancel().catch(() => {});
  };
  res.once("close", onClose);
  try {
    await pump(() => gone);
  } catch (error) {
    res.destroy();
    if (!gone) throw error;
  } finally {
    res.off("close", onClose);
  }
}

/**
 * A byte-stream body (the fs driver's files, undici's bodies) read with a BYOB
 * reader into two buffers in turn: one is filled while the other is being
 * written, and a buffer is read into again only after its write has been
 * handed to the kernel (the write callback). No allocation per chunk, so a
 * large download leaves no garbage behind; at most two chunks are in memory.
 */
async function pipeBytes(reader: ReadableStreamBYOBReader, res: ServerResponse): Promise<void> {
  await whileConnected(res, reader, async (gone) => {
    let free = new ArrayBuffer(BYOB_CHUNK);
    let spare = new ArrayBuffer(BYOB_CHUNK);
    let inFlight: Promise<void> = Promise.resolve();
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(free));
      if (done || value === undefined) break;
      // The previous chunk (in `spare`) must be out of our hands before its buffer is read into.
      await inFlight;
      if (gone()) return;
      inFlight = written(res, value);
      free = spare;
      spare = value.buffer as ArrayBuffer;
    }
    await inFlight;
    if (gone()) return;
    res.end();
  });
}

/** Write `chunk`; resolves once it has been flushed to the socket, or the response is gone. */
function written(res: ServerResponse, chunk: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("close", done);
      resolve();
    };
    res.on("close", done);
    res.write(chunk, done);
  });
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
