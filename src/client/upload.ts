/**
 * Blob uploads: one monolithic PUT, or POST then PATCH chunks then PUT, with
 * a failed chunk resumed from the upload status `Range` the server reports.
 *
 * @module
 */
import { expectStatus, pushScope, type ClientContext, type ProgressEvent, type TransferOptions } from "./context.js";
import { discard, RegistryClientError } from "./errors.js";
import type { Descriptor, LocalImageStore } from "./local-store.js";
import { apiUrl, type ImageReference } from "./reference.js";
import { limitStream } from "./verify.js";

/** How an upload is sent: chunk size (none: monolithic) and retries of a failed chunk. */
export interface UploadOptions extends TransferOptions {
  chunkSize?: number;
  retries?: number;
}

/**
 * Bytes the server holds, from an upload status `Range: 0-<last>`. Registries
 * write `0-0` for an empty upload (as Distribution does), so `0-0` counts as
 * empty: a one-byte upload is then re-sent whole, which is always safe.
 */
export function storedBytes(range: string | null): number {
  const match = /^(?:bytes=)?0-(\d+)$/.exec(range?.trim() ?? "");
  const last = match ? Number(match[1]) : 0;
  return last > 0 ? last + 1 : 0;
}

/** Abandon an upload session (`DELETE` its location), ignoring the answer. */
export async function cancelUpload(ctx: ClientContext, ref: ImageReference, location: URL, opts: TransferOptions): Promise<void> {
  const response = await ctx.transport.send({ method: "DELETE", url: location, scopes: pushScope(ref.repository), signal: opts.signal });
  discard(response);
}

async function startUpload(ctx: ClientContext, ref: ImageReference, opts: TransferOptions): Promise<URL> {
  const response = await ctx.transport.send({
    method: "POST",
    url: apiUrl(ref, `v2/${ref.repository}/blobs/uploads/`),
    scopes: pushScope(ref.repository),
    signal: opts.signal,
  });
  await expectStatus(response, [202], `starting an upload to ${ref.repository}`);
  const location = response.headers.get("location");
  if (!location) throw new RegistryClientError("BLOB_UPLOAD_INVALID", "the registry gave no upload Location", response.status);
  return new URL(location, response.url || apiUrl(ref, "v2/"));
}

/** One blob's upload in progress: where it goes, where its bytes come from, whom to tell. */
interface Upload {
  ctx: ClientContext;
  ref: ImageReference;
  blob: Descriptor;
  opts: UploadOptions;
  /** The local bytes from `offset` on. */
  open(offset: number): Promise<ReadableStream<Uint8Array>>;
  report(done: number, state?: ProgressEvent["state"]): void;
}

/** Upload one blob from the local store: monolithic, or in `opts.chunkSize` chunks. */
export async function uploadBlob(ctx: ClientContext, ref: ImageReference, blob: Descriptor, store: LocalImageStore, opts: UploadOptions): Promise<void> {
  const upload: Upload = {
    ctx,
    ref,
    blob,
    opts,
    async open(offset) {
      const stream = await store.getBlob(blob.digest, offset);
      if (!stream) throw new RegistryClientError("BLOB_UNKNOWN", `local blob ${blob.digest} is missing`, 0);
      return stream;
    },
    report: (done, state = "progress") => opts.onProgress?.({ digest: blob.digest, done, total: blob.size, state }),
  };
  upload.report(0, "started");
  let location = await startUpload(ctx, ref, opts);
  if (!opts.chunkSize) {
    await expectStatus(await finish(upload, location, () => upload.open(0), blob.size), [201], `uploading ${blob.digest}`);
  } else {
    location = await sendChunks(upload, location, opts.chunkSize);
    await expectStatus(await finish(upload, location), [201], `completing the upload of ${blob.digest}`);
  }
  upload.report(blob.size, "done");
}

/** The closing `PUT ?digest=`, with the whole body (monolithic) or none (after chunks). */
function finish(upload: Upload, url: URL, body?: () => Promise<BodyInit | null>, length = 0): Promise<Response> {
  const target = new URL(url);
  target.searchParams.set("digest", upload.blob.digest);
  return upload.ctx.transport.send({
    method: "PUT",
    url: target,
    headers: { "content-type": "application/octet-stream", "content-length": String(length) },
    body,
    scopes: pushScope(upload.ref.repository),
    signal: upload.opts.signal,
  });
}

/** PATCH every chunk in order, resuming after a failure; resolves to the location to finish at. */
async function sendChunks(upload: Upload, start: URL, chunkSize: number): Promise<URL> {
  const { ctx, ref, blob, opts } = upload;
  let location = start;
  let offset = 0;
  let failures = 0;
  while (offset < blob.size) {
    const length = Math.min(chunkSize, blob.size - offset);
    const from = offset;
    try {
      const response = await ctx.transport.send({
        method: "PATCH",
        url: location,
        headers: {
          "content-type": "application/octet-stream",
          "content-range": `${from}-${from + length - 1}`,
          "content-length": String(length),
        },
        body: async () => limitStream(await upload.open(from), length),
        scopes: pushScope(ref.repository),
        signal: opts.signal,
      });
      await expectStatus(response, [202], `uploading a chunk of ${blob.digest}`);
      const next = response.headers.get("location");
      if (next) location = new URL(next, location);
      offset = from + length;
      upload.report(offset);
    } catch (error) {
      if (opts.signal?.aborted || ++failures > (opts.retries ?? 3)) throw error;
      // Resume from what the server has (the upload status `Range`).
      const status = await ctx.transport.send({ method: "GET", url: location, scopes: pushScope(ref.repository), signal: opts.signal });
      discard(status);
      if (status.status !== 204) throw error;
      offset = storedBytes(status.headers.get("range"));
      const next = status.headers.get("location");
      if (next) location = new URL(next, location);
    }
  }
  return location;
}
