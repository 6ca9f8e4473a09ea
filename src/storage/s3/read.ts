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
 */
export function resumable(ctx: S3Context, response: Response, rawKey: string, op: string, start: number, end: number | undefined): ReadableStream<Uint8Array> {
  const etag = response.headers.get("etag");
  let reader = (response.body ?? emptyStream()).getReader();
  let position = start;
  let resumes = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        try {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          position += value.byteLength;
          return controller.enqueue(value);
        } catch (error) {
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
          reader = (again.body ?? emptyStream()).getReader();
        }
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
}
