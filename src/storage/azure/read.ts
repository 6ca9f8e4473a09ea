/**
 * Reading: `stat` (Get Blob Properties) and `read` (a ranged Get Blob whose
 * body resumes after a failed connection).
 *
 * @module
 */
import { StorageError, type ByteRange, type ObjectInfo } from "../driver.js";
import { emptyStream } from "../streams.js";
import type { AzureContext } from "./context.js";

/** The driver's `stat`: one HEAD. */
export async function stat(ctx: AzureContext, key: string): Promise<ObjectInfo | undefined> {
  const head = await ctx.client.send({ op: "stat", method: "HEAD", blob: ctx.names.blob(key), accept: [404] });
  if (head.status !== 200) return undefined;
  return { size: Number(head.headers.get("content-length") ?? "0"), modified: new Date(head.headers.get("last-modified") ?? 0) };
}

/** The driver's `read`: one GET with `x-ms-range`; a range past the end is an empty stream. */
export async function read(ctx: AzureContext, key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
  const offset = range?.offset ?? 0;
  const length = range?.length;
  if (length === 0) return (await stat(ctx, key)) ? emptyStream() : undefined;
  const blob = ctx.names.blob(key);
  const end = length === undefined ? undefined : offset + length;
  const response = await ctx.client.send({ op: "read", method: "GET", blob, headers: rangeHeaders(offset, end), accept: [404, 416] });
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.status === 416) {
    await response.body?.cancel();
    return emptyStream();
  }
  return resumable(ctx, response, blob, offset, end);
}

/** `x-ms-range` for bytes `[offset, end)` (`end` open: to the end of the blob); none for the whole blob. */
export function rangeHeaders(offset: number, end: number | undefined): Record<string, string> {
  if (offset === 0 && end === undefined) return {};
  return { "x-ms-range": `bytes=${offset}-${end === undefined ? "" : end - 1}` };
}

/**
 * The body of a GET that, when the connection fails mid-way, continues with a
 * ranged GET from the first byte not yet delivered (`If-Match` the same ETag,
 * so a replaced blob fails the read rather than mixing), up to `maxRetries` times.
 */
export function resumable(ctx: AzureContext, response: Response, blob: string, start: number, end: number | undefined): ReadableStream<Uint8Array> {
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
            throw new StorageError("io", `azure read ${JSON.stringify(blob)}: the connection failed while reading`, { cause: error });
          }
          resumes++;
          const again = await ctx.client.send({ op: "read", method: "GET", blob, headers: { ...rangeHeaders(position, end), "if-match": etag }, accept: [412] });
          if (again.status === 412) {
            await again.body?.cancel();
            throw new StorageError("io", `azure read ${JSON.stringify(blob)}: the blob changed while being read`, { cause: error });
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
