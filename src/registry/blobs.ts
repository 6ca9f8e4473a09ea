/**
 * Blob GET, HEAD and DELETE. A blob is visible in a repository only when it is
 * linked there (pushed or mounted), as in CNCF Distribution. Bytes stream from
 * the driver straight into the response.
 *
 * @module
 */
import type { RegistryContext } from "./context.js";
import type { Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { blobData, layerLink } from "./layout.js";
import { parseRange } from "./range.js";
import { digestHeaders, empty } from "./responses.js";
import { exists } from "./storage-io.js";
import { baseHeaders } from "../oci/wire.js";
import { blobTarget, emitEvent } from "./events.js";
import { checkedCommit, type PendingWrite } from "./policy/write-policy.js";

function blobUnknown(digest: Digest): RegistryError {
  return new RegistryError("BLOB_UNKNOWN", "blob unknown to registry", 404, { digest: digest.value });
}

/** Throw `BLOB_UNKNOWN` unless the blob is linked in `name`. */
async function requireLink(ctx: RegistryContext, name: string, digest: Digest): Promise<void> {
  if (!(await exists(ctx.storage, layerLink(name, digest)))) throw blobUnknown(digest);
}

/** Size of a blob linked in `name`, or throw `BLOB_UNKNOWN`. */
async function linkedSize(ctx: RegistryContext, name: string, digest: Digest): Promise<number> {
  await requireLink(ctx, name, digest);
  const info = await ctx.storage.stat(blobData(digest));
  if (!info) throw blobUnknown(digest);
  return info.size;
}

function blobHeaders(digest: Digest, size: number): Headers {
  const headers = baseHeaders(digestHeaders(digest.value));
  headers.set("Content-Type", "application/octet-stream");
  headers.set("Content-Length", String(size));
  headers.set("Accept-Ranges", "bytes");
  headers.set("ETag", `"${digest.value}"`);
  headers.set("Cache-Control", "max-age=31536000");
  return headers;
}

/**
 * `GET /v2/<name>/blobs/<digest>`, honouring a single byte `Range`; or, when
 * redirects are on and the driver hands out a URL for the blob, a 307 to it
 * (the client sends its `Range` there). Only after the link check, so a URL
 * is never handed to a caller who may not see the blob in this repository.
 */
export async function getBlob(ctx: RegistryContext, request: Request, name: string, digest: Digest): Promise<Response> {
  if (ctx.redirect && ctx.storage.redirectURL) {
    // No stat: the driver's URL check already finds a missing blob (then undefined, and the stat below says 404).
    await requireLink(ctx, name, digest);
    const location = await ctx.storage.redirectURL(blobData(digest), { expiresInSeconds: ctx.redirect.expiresInSeconds });
    if (location !== undefined) {
      // A pull all the same (as Distribution counts it); the size is left out: no stat on this path.
      await emitEvent(ctx, request, "pull", () => {
        const { size: _unknown, length: _same, ...target } = blobTarget(ctx, request, name, digest.value, 0);
        return target;
      });
      const headers = baseHeaders(digestHeaders(digest.value));
      headers.set("Location", location);
      return new Response(null, { status: 307, headers });
    }
  }
  const size = await linkedSize(ctx, name, digest);
  const range = parseRange(request.headers.get("range"), size);
  if (range.kind === "unsatisfiable") {
    throw new RegistryError("RANGE_INVALID", "requested range not satisfiable", 416, { size }, { "Content-Range": `bytes */${size}` });
  }
  const headers = blobHeaders(digest, size);
  await emitEvent(ctx, request, "pull", () => blobTarget(ctx, request, name, digest.value, size));
  if (range.kind === "partial") {
    const length = range.end - range.start + 1;
    const body = await ctx.storage.read(blobData(digest), { offset: range.start, length });
    if (!body) throw blobUnknown(digest);
    headers.set("Content-Length", String(length));
    headers.set("Content-Range", `bytes ${range.start}-${range.end}/${size}`);
    return new Response(body, { status: 206, headers });
  }
  const body = await ctx.storage.read(blobData(digest));
  if (!body) throw blobUnknown(digest);
  return new Response(body, { status: 200, headers });
}

/** `HEAD /v2/<name>/blobs/<digest>`: headers only, storage is not read. */
export async function headBlob(ctx: RegistryContext, name: string, digest: Digest): Promise<Response> {
  const size = await linkedSize(ctx, name, digest);
  return new Response(null, { status: 200, headers: blobHeaders(digest, size) });
}

/** `DELETE /v2/<name>/blobs/<digest>`: unlink from the repository (bytes stay for other repositories). */
export async function deleteBlob(ctx: RegistryContext, request: Request, name: string, digest: Digest): Promise<Response> {
  const link = layerLink(name, digest);
  if (!(await exists(ctx.storage, link))) throw blobUnknown(digest);
  // Write policies are asked: an immutable tag's image must keep its blobs.
  const write = async (): Promise<PendingWrite> => ({ action: "deleteBlob", repository: name, digest: digest.value, caller: ctx.callerOf(request) });
  await checkedCommit(ctx.policy, ctx.storage, write, () => ctx.storage.delete(link));
  await emitEvent(ctx, request, "delete", () => ({ digest: digest.value, repository: name }));
  return empty(202, digestHeaders(digest.value));
}
