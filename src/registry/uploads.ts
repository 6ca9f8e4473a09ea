/**
 * Blob uploads: POST (start, single-POST upload, cross-repository mount),
 * PATCH (chunks), PUT (finish), GET (status) and DELETE (cancel).
 *
 * State lives in storage (the upload object) and in the signed `_state`
 * parameter, never in memory, so any process with the same secret can continue
 * an upload. A blob becomes visible only after its digest is verified: the
 * upload object is the temporary, and it is moved into place on success.
 *
 * @module
 */
import type { MountRequest } from "./access.js";
import { callOf, type RegistryContext } from "./context.js";
import { parseDigest, type Digest, type DigestAlgorithm } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { absolute, digestHeaders, empty } from "./responses.js";
import type { UploadState } from "./upload-state.js";
import { HEADERS, setPair } from "../oci/wire.js";
import type { UploadAppend, UploadAppended, UploadSession } from "./stores/types.js";

/** An upload whose `_state` verified and whose object exists. */
interface Session {
  state: UploadState;
  /** Current size of the upload object. */
  size: number;
}

function uploadUnknown(): RegistryError {
  return new RegistryError("BLOB_UPLOAD_UNKNOWN", "blob upload unknown to registry");
}

/** `Range: 0-<last byte>` as Distribution writes it (`0-0` when empty). */
function rangeValue(size: number): string {
  return `0-${Math.max(0, size - 1)}`;
}

async function sessionResponse(ctx: RegistryContext, request: Request, state: UploadState, status: number): Promise<Response> {
  const headers = new Headers();
  const token = await ctx.states.sign(state);
  headers.set("Location", absolute(request, `${ctx.v2}/${state.name}/blobs/uploads/${state.uuid}?_state=${encodeURIComponent(token)}`));
  headers.set("Range", rangeValue(state.offset));
  setPair(headers, HEADERS.uploadUuid, state.uuid);
  return empty(status, headers);
}

async function loadSession(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Session> {
  const state = await ctx.states.verify(url.searchParams.get("_state"), name, uuid);
  const size = await ctx.stores.uploads.status(name, state, callOf(ctx, request));
  if (size === undefined) throw uploadUnknown();
  return { state, size };
}

/** `state` at a new offset: the digest it carried no longer covers the bytes. */
function moved(state: UploadState, offset: number): UploadState {
  const next: UploadState = { name: state.name, uuid: state.uuid, offset, startedAt: state.startedAt };
  if (state.owner !== undefined) next.owner = state.owner;
  return next;
}

function offsetMismatch(size: number): RegistryError {
  return new RegistryError("RANGE_INVALID", "upload offset does not match the stored size", 416, { size }, { Range: rangeValue(size) });
}

/** The body's declared `Content-Length`, when it is a number. */
function declaredLength(request: Request): number | undefined {
  const declared = Number(request.headers.get("content-length") ?? "0");
  return Number.isFinite(declared) ? declared : undefined;
}

/** Append the request's body to the upload at `size`. */
function append(ctx: RegistryContext, request: Request, name: string, session: UploadSession, size: number, algorithm: DigestAlgorithm): Promise<UploadAppended> {
  const options: UploadAppend = { expectedSize: size, algorithm, signal: request.signal };
  const declared = declaredLength(request);
  if (declared !== undefined) options.declaredLength = declared;
  return ctx.stores.uploads.append(name, session, request.body, options, callOf(ctx, request));
}

/** Make the upload's first `size` bytes the blob `digest` of `name` (201), verifying them first. */
async function commit(ctx: RegistryContext, request: Request, name: string, session: UploadSession, digest: Digest, computed: string | undefined, size: number): Promise<Response> {
  await ctx.stores.uploads.commit(name, session, digest, computed === undefined ? { size } : { size, computed }, callOf(ctx, request));
  return blobCreated(ctx, request, name, digest);
}

function blobCreated(ctx: RegistryContext, request: Request, name: string, digest: Digest): Response {
  const headers = digestHeaders(digest.value);
  headers.set("Location", absolute(request, `${ctx.v2}/${name}/blobs/${digest.value}`));
  return empty(201, headers);
}

/**
 * `POST /v2/<name>/blobs/uploads/`: start a session (202), or with `?digest=`
 * take the whole blob in this request (201), or with `?mount=&from=` link a blob
 * from another repository (201; a normal 202 session when `from` lacks it).
 * `?mount` without `from` starts a normal session, like Distribution 2.8.
 */
export async function startUpload(ctx: RegistryContext, request: Request, url: URL, name: string, mount: MountRequest | undefined): Promise<Response> {
  const call = callOf(ctx, request);
  if (mount && (await ctx.stores.blobs.mount(name, mount.from, mount.digest, call))) return blobCreated(ctx, request, name, mount.digest);
  const digestParam = url.searchParams.get("digest");
  const digest = digestParam === null ? undefined : parseDigest(digestParam);
  const session = await ctx.stores.uploads.start(name, call, digest === undefined ? undefined : { single: true });
  const state: UploadState = { name, uuid: session.uuid, offset: 0, startedAt: session.startedAt };
  if (session.owner !== undefined) state.owner = session.owner;
  if (digest === undefined) return sessionResponse(ctx, request, state, 202);
  try {
    const result = await append(ctx, request, name, session, 0, digest.algorithm);
    return await commit(ctx, request, name, session, digest, result.digest, result.size);
  } catch (error) {
    // no session was handed out, so nobody could resume this one
    await ctx.stores.uploads.cancel(name, session, call).catch(() => {});
    throw error;
  }
}

const CONTENT_RANGE = /^(?:bytes )?(\d+)-(\d+)(?:\/(?:\d+|\*))?$/;

/**
 * Check a chunk's `Content-Range: a-b` (optional): it must be well formed,
 * start at the upload's current `size`, have `b >= a`, and agree with
 * `Content-Length`; otherwise 416 with the current `Range`, and the session
 * stays as it was.
 */
function checkContentRange(request: Request, size: number): void {
  const contentRange = request.headers.get("content-range");
  if (contentRange === null) return;
  const match = CONTENT_RANGE.exec(contentRange.trim());
  if (!match) throw new RegistryError("RANGE_INVALID", "malformed Content-Range", 416, undefined, { Range: rangeValue(size) });
  const start = Number(match[1]);
  const end = Number(match[2]);
  if (!Number.isSafeInteger(end) || end < start) {
    throw new RegistryError("RANGE_INVALID", "Content-Range ends before it starts", 416, undefined, { Range: rangeValue(size) });
  }
  if (start !== size) throw offsetMismatch(size);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) !== end - start + 1) {
    throw new RegistryError("RANGE_INVALID", "Content-Range does not match Content-Length", 416, undefined, { Range: rangeValue(size) });
  }
}

/**
 * `PATCH` a chunk. With `Content-Range: a-b` the chunk must start at the
 * current offset (else 416); without it the body is appended (skopeo sends the
 * whole blob this way). One request writes to an upload at a time: a PATCH
 * that finds another still writing gets 416 and changes nothing.
 */
export async function patchUpload(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const { state, size } = await loadSession(ctx, request, url, name, uuid);
  if (state.offset !== size) throw offsetMismatch(size);
  checkContentRange(request, size);
  const result = await append(ctx, request, name, state, size, "sha256");
  const next = moved(state, result.size);
  // The digest of every byte so far rides in the signed state: any process can commit without re-reading.
  if (result.digest !== undefined) next.digest = result.digest;
  else if (result.written === 0 && state.digest) next.digest = state.digest;
  return sessionResponse(ctx, request, next, 202);
}

/** `PUT ?digest=`: append an optional final chunk, verify the digest, commit. */
export async function putUpload(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const digestParam = url.searchParams.get("digest");
  const { state, size } = await loadSession(ctx, request, url, name, uuid);
  if (digestParam === null) throw new RegistryError("DIGEST_INVALID", "the digest query parameter is required");
  const digest = parseDigest(digestParam);
  if (state.offset !== size) throw offsetMismatch(size);
  checkContentRange(request, size);
  const known = state.digest?.startsWith(`${digest.algorithm}:`) ? state.digest : undefined;
  let computed: string | undefined = known;
  let total = size;
  if (request.body && request.headers.get("content-length") !== "0") {
    const result = await append(ctx, request, name, state, size, digest.algorithm);
    total = result.size;
    computed = result.digest ?? (result.written === 0 ? known : undefined);
  }
  return commit(ctx, request, name, state, digest, computed, total);
}

/** `GET` upload status: 204 with the current `Range` and a fresh `Location`. */
export async function uploadStatus(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const { state, size } = await loadSession(ctx, request, url, name, uuid);
  const next = state.offset === size ? state : moved(state, size);
  return sessionResponse(ctx, request, next, 204);
}

/** `DELETE`: cancel the upload (204). */
export async function cancelUpload(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const { state } = await loadSession(ctx, request, url, name, uuid);
  await ctx.stores.uploads.cancel(name, state, callOf(ctx, request));
  return empty(204);
}
