/**
 * Reading: `stat` and `read` of plain and appended objects, and GET bodies
 * that resume after a failed connection.
 *
 * @module
 */
import { StorageError, type ByteRange, type ObjectInfo } from "../driver.js";
import { concatStreams, emptyStream } from "../streams.js";
import type { S3Context } from "./context.js";
import { inspect, listParts } from "./parts.js";

/**
 * The driver's `stat`: a plain object, else the contiguous part objects of an
 * appended one. A key this driver appended to lately is likely parts only: one
 * listing finds the plain object and the parts alike.
 */
export async function stat(ctx: S3Context, key: string): Promise<ObjectInfo | undefined> {
  if (ctx.appended.has(key)) {
    const stored = await inspect(ctx, key);
    if (stored.plain) return { size: stored.plain.size, modified: stored.plain.modified };
    return partsInfo(stored.parts, stored.partsSize);
  }
  const head = await ctx.client.send({ op: "stat", method: "HEAD", key: ctx.keys.objectKey(key), accept: [404] });
  if (head.status === 200) {
    return { size: Number(head.headers.get("content-length") ?? "0"), modified: new Date(head.headers.get("last-modified") ?? 0) };
  }
  const { parts, partsSize } = await listParts(ctx, key);
  return partsInfo(parts, partsSize);
}

function partsInfo(parts: Array<{ modified: Date }>, size: number): ObjectInfo | undefined {
  if (parts.length === 0) return undefined;
  return { size, modified: new Date(Math.max(...parts.map((p) => p.modified.getTime()))) };
}

/** The driver's `read`: one ranged GET of a plain object, else the part objects the range covers, one after the other. */
export async function read(ctx: S3Context, key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
  const offset = range?.offset ?? 0;
  const length = range?.length;
  const headers: Record<string, string> = {};
  if (length === 0) {
    return (await stat(ctx, key)) ? emptyStream() : undefined;
  }
  const rawKey = ctx.keys.objectKey(key);
  if (offset > 0 || length !== undefined) headers.range = `bytes=${offset}-${length === undefined ? "" : offset + length - 1}`;
  const response = await ctx.client.send({ op: "read", method: "GET", key: rawKey, headers, accept: [404, 416] });
  if (response.status === 200 || response.status === 206) {
    return resumable(ctx, response, rawKey, "read", offset, length === undefined ? undefined : offset + length);
  }
  await response.body?.cancel();
  if (response.status === 416) return emptyStream();
  // Not a plain object: maybe an appended one.
  const { parts } = await listParts(ctx, key);
  if (parts.length === 0) return undefined;
  const end = length === undefined ? Infinity : offset + length;
  const sources: Array<() => Promise<ReadableStream<Uint8Array>>> = [];
  for (const part of parts) {
    const from = Math.max(offset, part.offset);
    const to = Math.min(end, part.offset + part.size);
    if (to <= from) continue;
    const whole = from === part.offset && to === part.offset + part.size;
    sources.push(() => getStream(ctx, part.key, "read", whole ? undefined : [from - part.offset, to - part.offset - 1]));
  }
  return concatStreams(sources);
}

/**
 * The body of bucket key `rawKey` (a part object), or of `range` (inclusive) of it;
 * with `etag`, only that version of it. A missing object is an `io` error: the
 * part was listed a moment ago, so a move or delete took it meanwhile.
 */
export async function getStream(ctx: S3Context, rawKey: string, op: string, range?: [number, number], etag?: string): Promise<ReadableStream<Uint8Array>> {
  const headers: Record<string, string> = range ? { range: `bytes=${range[0]}-${range[1]}` } : {};
  if (etag) headers["if-match"] = `"${etag}"`;
  const response = await ctx.client.send({ op, method: "GET", key: rawKey, headers, accept: [404] });
  if (response.status === 404) {
    await response.body?.cancel();
    throw new StorageError("io", `s3 ${op}: an appended part vanished while being read (concurrent move or delete)`);
  }
  return resumable(ctx, response, rawKey, op, range ? range[0] : 0, range ? range[1] + 1 : undefined);
}

/**
 * The body of a GET that, when the connection fails mid-way, continues with a
 * ranged GET from the first byte not yet delivered (`If-Match` the same ETag,
 * so a replaced object fails rather than mixing), up to `maxRetries` times.
 *
 * A byte stream: a consumer with a BYOB reader (the Node adapter's download
 * path, 1 MiB buffers) gets in each read as much of the body as has arrived,
 * up to its buffer's size, so it writes large pieces rather than each of the
 * fetch body's chunks (about 16-64 KiB) on its own; a default reader gets the
 * fetch body's chunks as they come.
 */
// Over 80 lines: one stream's state (source, position, resumes, the spare buffer) shared by fill, resume and pull.
export function resumable(ctx: S3Context, response: Response, rawKey: string, op: string, start: number, end: number | undefined): ReadableStream<Uint8Array> {
  const etag = response.headers.get("etag");
  let source = openSource(response);
  let position = start;
  let resumes = 0;
  /** The buffer the fetch body is read into for a BYOB consumer, reused from read to read. */
  let spare: ArrayBuffer | undefined;
  /**
   * Up to `want` bytes of the body, fewer only at its end: read into our own buffer,
   * then copied into the consumer's (its buffer is never handed to the fetch body, so
   * a failed read, then resumed, cannot take it away: one memory copy per MiB). A fetch body holds little
   * (undici: about 64 KiB) before it pauses the socket, so one read is that much;
   * the consumer's buffer is filled by as many as it takes, and it writes 1 MiB at once.
   */
  const fill = async (reader: ReadableStreamBYOBReader, want: number): Promise<Uint8Array> => {
    let buffer: ArrayBuffer = spare !== undefined && spare.byteLength >= want ? spare : new ArrayBuffer(want);
    spare = undefined;
    let length = 0;
    // A failed read takes the buffer with it (it was handed over): nothing of it was
    // delivered, so the resumed GET starts at `position` again.
    while (length < want) {
      const { done, value } = await reader.read(new Uint8Array(buffer, length, want - length));
      if (value) buffer = value.buffer as ArrayBuffer;
      if (done || !value) break;
      length += value.byteLength;
    }
    spare = buffer;
    return new Uint8Array(buffer, 0, length);
  };
  const resume = async (error: unknown): Promise<void> => {
    if (!etag || resumes >= ctx.maxRetries || (end !== undefined && position >= end)) {
      throw new StorageError("io", `s3 ${op} ${JSON.stringify(rawKey)}: the connection failed while reading`, { cause: error });
    }
    resumes++;
    const again = await ctx.client.send({
      op,
      method: "GET",
      key: rawKey,
      headers: { range: `bytes=${position}-${end === undefined ? "" : end - 1}`, "if-match": etag },
      accept: [412],
    });
    if (again.status === 412) {
      await again.body?.cancel();
      throw new StorageError("io", `s3 ${op} ${JSON.stringify(rawKey)}: the object changed while being read`, { cause: error });
    }
    source = openSource(again);
  };
  return new ReadableStream({
    type: "bytes",
    async pull(controller: ReadableByteStreamController) {
      const request = controller.byobRequest;
      for (;;) {
        try {
          const view = request?.view;
          if (view && source.byob) {
            const filled = await fill(source.byob, view.byteLength);
            if (filled.length === 0) {
              controller.close();
              request!.respond(0);
              return;
            }
            new Uint8Array(view.buffer, view.byteOffset, view.byteLength).set(filled);
            position += filled.byteLength;
            return request!.respond(filled.byteLength);
          }
          const { done, value } = await source.read();
          if (done) {
            controller.close();
            request?.respond(0);
            return;
          }
          position += value.byteLength;
          return controller.enqueue(value as Uint8Array<ArrayBuffer>);
        } catch (error) {
          await resume(error);
        }
      }
    },
    async cancel(reason) {
      await source.cancel(reason).catch(() => {});
    },
  });
}

/** A GET body's reader: BYOB when the fetch body is a byte stream (undici's is), else its chunks. */
interface BodySource {
  byob: ReadableStreamBYOBReader | undefined;
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason?: unknown): Promise<void>;
}

function openSource(response: Response): BodySource {
  const body = response.body ?? emptyStream();
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // not a byte stream: its chunks as they come
  }
  if (byob) {
    const reader = byob;
    return { byob: reader, read: () => reader.read(new Uint8Array(64 * 1024)), cancel: (reason) => reader.cancel(reason) };
  }
  const reader = body.getReader();
  return { byob: undefined, read: () => reader.read(), cancel: (reason) => reader.cancel(reason) };
}
