/**
 * Blob GET, HEAD and DELETE. A blob is visible in a repository only when it is
 * linked there (pushed or mounted), as in CNCF Distribution. Bytes stream from
 * the store straight into the response. HTTP ↔ store calls only.
 *
 * @module
 */
import { callOf, type RegistryContext } from "./context.js";
import type { Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { digestHeaders, empty } from "./responses.js";
import { baseHeaders } from "../oci/wire.js";
import type { BlobInfo, WithHeaders } from "./stores/types.js";

function blobUnknown(digest: Digest): RegistryError {
  return new RegistryError("BLOB_UNKNOWN", "blob unknown to registry", 404, { digest: digest.value });
}

function blobHeaders(info: BlobInfo): Headers {
  const headers = baseHeaders(digestHeaders(info.digest.value));
  headers.set("Content-Type", "application/octet-stream");
  if (info.size >= 0) headers.set("Content-Length", String(info.size));
  headers.set("Accept-Ranges", "bytes");
  headers.set("ETag", `"${info.digest.value}"`);
  headers.set("Cache-Control", "max-age=31536000");
  return withExtra(headers, info);
}

/** `headers` with what a wrapper attached to the store's answer. */
function withExtra(headers: Headers, answer: WithHeaders): Headers {
  if (answer.headers) for (const [key, value] of Object.entries(answer.headers)) headers.set(key, value);
  return headers;
}

/**
 * `GET /v2/<name>/blobs/<digest>`, honouring a single byte `Range`; or, when
 * redirects are on and the storage hands out a URL for the blob, a 307 to it
 * (the client sends its `Range` there).
 */
export async function getBlob(ctx: RegistryContext, request: Request, name: string, digest: Digest): Promise<Response> {
  const { redirect } = ctx.settings;
  const range = request.headers.get("range") ?? undefined;
  const options = redirect ? (range === undefined ? { redirect } : { redirect, range }) : range === undefined ? {} : { range };
  const content = await ctx.stores.blobs.read(name, digest, options, callOf(ctx, request));
  if (!content) throw blobUnknown(digest);
  if (content.kind === "redirect") {
    const headers = withExtra(baseHeaders(digestHeaders(digest.value)), content);
    headers.set("Location", content.url);
    return new Response(null, { status: 307, headers });
  }
  const headers = blobHeaders(content);
  if (!content.range) return new Response(content.body, { status: 200, headers });
  headers.set("Content-Length", String(content.range.end - content.range.start + 1));
  headers.set("Content-Range", `bytes ${content.range.start}-${content.range.end}/${content.size}`);
  return new Response(content.body, { status: 206, headers });
}

/** `HEAD /v2/<name>/blobs/<digest>`: headers only, storage is not read. */
export async function headBlob(ctx: RegistryContext, request: Request, name: string, digest: Digest): Promise<Response> {
  const info = await ctx.stores.blobs.stat(name, digest, callOf(ctx, request));
  if (!info) throw blobUnknown(digest);
  return new Response(null, { status: 200, headers: blobHeaders(info) });
}

/** `DELETE /v2/<name>/blobs/<digest>`: unlink from the repository (bytes stay for other repositories). */
export async function deleteBlob(ctx: RegistryContext, request: Request, name: string, digest: Digest): Promise<Response> {
  await ctx.stores.blobs.delete(name, digest, callOf(ctx, request));
  return empty(202, digestHeaders(digest.value));
}
