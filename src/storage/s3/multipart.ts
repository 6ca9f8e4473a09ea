/**
 * Multipart uploads: a streamed write of a body larger than one part, and the
 * server-side assembly of an object from other objects (UploadPartCopy for
 * big sources, runs of small part objects merged by streaming them into one
 * part), as `move` needs it.
 *
 * @module
 */
import { StorageError } from "../driver.js";
import { concatStreams } from "../streams.js";
import { pieceBody, type Piece, type PieceReader } from "./body.js";
import type { ReplayableBody } from "./client.js";
import type { S3Context } from "./context.js";
import type { PartObject } from "./parts.js";
import { getStream } from "./read.js";
import { childText, escapeXml } from "./xml.js";

const MiB = 1024 * 1024;
/** The smallest part S3 accepts (but for the last one). */
export const MIN_PART = 5 * MiB;
/** The largest part S3 accepts. */
export const MAX_PART = 5 * 1024 * MiB;
/** The largest object one CopyObject may copy. */
const MAX_COPY = 5 * 1024 * MiB;
/** The most parts one multipart upload may have. */
const MAX_PARTS = 10_000;

/** One part of an assembled object: a copied object (or range of one), or part objects merged by streaming. */
export type AssemblyTask =
  | { kind: "copy"; source: string; etag?: string | undefined; range?: [number, number] }
  | { kind: "merge"; sources: PartObject[]; length: number };

/** Upload the rest of a body as a multipart upload to `rawKey`, starting with `first`; `concurrency` parts in flight. */
export async function multipartWrite(ctx: S3Context, rawKey: string, first: Piece, reader: PieceReader, signal: AbortSignal | undefined): Promise<number> {
  const { client, concurrency, signPayload } = ctx;
  const uploadId = await createMultipart(ctx, rawKey, signal);
  try {
    const etags: string[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown;
    let total = 0;
    let partNumber = 0;
    for (let piece: Piece | undefined = first; piece && piece.length > 0; piece = await reader.next()) {
      const number = ++partNumber;
      if (number > MAX_PARTS) throw new StorageError("io", `s3 write: more than ${MAX_PARTS} parts; raise partSize`);
      total += piece.length;
      const current = piece;
      const task = client
        .send({ op: "write", method: "PUT", key: rawKey, query: { partNumber: number, uploadId }, body: pieceBody(current, signPayload), signal })
        .then((response) => {
          etags[number - 1] = response.headers.get("etag") ?? "";
          void response.body?.cancel();
        })
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => current.release());
      const tracked: Promise<void> = task.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      if (failure) break;
    }
    await Promise.all(inFlight);
    if (failure) throw failure;
    await completeMultipart(ctx, rawKey, uploadId, etags, signal);
    return total;
  } catch (error) {
    await reader.cancel(error);
    await abortMultipart(ctx, rawKey, uploadId);
    throw error;
  }
}

/** Start a multipart upload to `rawKey`; its upload id. */
export async function createMultipart(ctx: S3Context, rawKey: string, signal?: AbortSignal): Promise<string> {
  const created = await ctx.client.sendXml({ op: "write", method: "POST", key: rawKey, query: { uploads: "" }, signal });
  const uploadId = childText(created, "UploadId");
  if (!uploadId) throw new StorageError("io", "s3 write: no UploadId in the answer to CreateMultipartUpload");
  return uploadId;
}

/** Finish a multipart upload with the ETags of its parts, in part order. */
export async function completeMultipart(ctx: S3Context, rawKey: string, uploadId: string, etags: string[], signal?: AbortSignal): Promise<void> {
  const xml = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join("")}</CompleteMultipartUpload>`;
  await ctx.client.sendXml({ op: "write", method: "POST", key: rawKey, query: { uploadId }, body: xml, headers: { "content-type": "application/xml" }, signal });
}

/** Abort a multipart upload, best effort. */
export async function abortMultipart(ctx: S3Context, rawKey: string, uploadId: string): Promise<void> {
  await ctx.client.send({ op: "abort", method: "DELETE", key: rawKey, query: { uploadId }, accept: [404] }).then(
    (r) => r.body?.cancel(),
    () => {}, // best effort: a bucket lifecycle rule should clean up what is left
  );
}

/** Copy `sourceKey` (raw) of `size` bytes to `rawKey` server-side; only the version with `etag`, when given. */
export async function copyObject(ctx: S3Context, sourceKey: string, size: number, rawKey: string, etag?: string): Promise<void> {
  if (size <= MAX_COPY) {
    await ctx.client.sendXml({ op: "move", method: "PUT", key: rawKey, headers: copySourceHeaders(ctx, sourceKey, etag) });
    return;
  }
  const tasks: AssemblyTask[] = [];
  for (let offset = 0; offset < size; offset += ctx.partSize) {
    tasks.push({ kind: "copy", source: sourceKey, etag, range: [offset, Math.min(size, offset + ctx.partSize) - 1] });
  }
  await assemble(ctx, rawKey, tasks);
}

/** `x-amz-copy-source`, pinned to one version of the source by `x-amz-copy-source-if-match` (radosgw 16 ignores that; AWS and MinIO honour it). */
export function copySourceHeaders(ctx: S3Context, sourceKey: string, etag: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { "x-amz-copy-source": ctx.client.copySource(sourceKey) };
  if (etag) headers["x-amz-copy-source-if-match"] = `"${etag}"`;
  return headers;
}

/** Build `rawKey` from tasks as one multipart upload, `copyConcurrency` parts at a time. */
export async function assemble(ctx: S3Context, rawKey: string, tasks: AssemblyTask[]): Promise<void> {
  if (tasks.length > MAX_PARTS) throw new StorageError("io", `s3 move: more than ${MAX_PARTS} parts`);
  const uploadId = await createMultipart(ctx, rawKey);
  try {
    const etags: string[] = new Array(tasks.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < tasks.length; i = next++) {
        etags[i] = await uploadAssemblyPart(ctx, rawKey, { partNumber: i + 1, uploadId }, tasks[i]!);
      }
    };
    // Copies cost no memory here (the store copies), merges only their stream's: more at once than a write.
    await Promise.all(Array.from({ length: Math.min(ctx.copyConcurrency, tasks.length) }, worker));
    await completeMultipart(ctx, rawKey, uploadId, etags);
  } catch (error) {
    await abortMultipart(ctx, rawKey, uploadId);
    throw error;
  }
}

/** Upload one part of an assembly (UploadPartCopy or a merged body); its ETag. */
async function uploadAssemblyPart(ctx: S3Context, rawKey: string, query: { partNumber: number; uploadId: string }, task: AssemblyTask): Promise<string> {
  if (task.kind === "copy") {
    const headers = copySourceHeaders(ctx, task.source, task.etag);
    if (task.range) headers["x-amz-copy-source-range"] = `bytes=${task.range[0]}-${task.range[1]}`;
    const result = await ctx.client.sendXml({ op: "move", method: "PUT", key: rawKey, query, headers });
    return childText(result, "ETag") ?? "";
  }
  const response = await ctx.client.send({ op: "move", method: "PUT", key: rawKey, query, body: mergedBody(ctx, task.sources, task.length) });
  const etag = response.headers.get("etag") ?? "";
  void response.body?.cancel();
  return etag;
}

/** A body streaming part objects one after the other (reopened on retry), each only in the version listed. */
export function mergedBody(ctx: S3Context, sources: PartObject[], length: number): ReplayableBody {
  return { length, open: () => concatStreams(sources.map((p) => () => getStream(ctx, p.key, "move", undefined, p.etag))) };
}

/** Plan the parts of an assembled object: big part objects are copied, runs of small ones merged. */
export function planAssembly(parts: PartObject[]): AssemblyTask[] {
  const tasks: AssemblyTask[] = [];
  let run: PartObject[] = [];
  let runLength = 0;
  for (const part of parts) {
    if (run.length === 0 && part.size >= MIN_PART) {
      tasks.push({ kind: "copy", source: part.key, etag: part.etag });
      continue;
    }
    run.push(part);
    runLength += part.size;
    if (runLength >= MIN_PART) {
      tasks.push({ kind: "merge", sources: run, length: runLength });
      run = [];
      runLength = 0;
    }
  }
  if (run.length > 0) tasks.push({ kind: "merge", sources: run, length: runLength });
  return tasks;
}
