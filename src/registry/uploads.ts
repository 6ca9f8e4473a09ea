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
import { appendBody } from "./body-stream.js";
import type { RegistryContext } from "./context.js";
import { parseDigest, type Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { createHasher, digestStream, type StreamHasher } from "../oci/hash.js";
import { blobData, layerLink, uploadData } from "./layout.js";
import { absolute, digestHeaders, empty } from "./responses.js";
import { ensureRepository, exists } from "./storage-io.js";
import { StorageError } from "../storage/driver.js";
import { byteAllowance, callerKey, checkNewSession, forgetSession, overByteLimit, registerSession, removeSession, serialized } from "./upload-limits.js";
import type { UploadState } from "./upload-state.js";
import { HEADERS, setPair } from "../oci/wire.js";
import { blobTarget, emitEvent, repositoryCreated } from "./events.js";
import { checkedCommit, type PendingWrite } from "./policy/write-policy.js";

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

async function loadSession(ctx: RegistryContext, url: URL, name: string, uuid: string): Promise<Session> {
  const state = await ctx.states.verify(url.searchParams.get("_state"), name, uuid);
  const info = await ctx.storage.stat(uploadData(name, uuid));
  if (!info) throw uploadUnknown();
  // Too old by this registry's clock (abandoned ones go by the sweep and when a limit is reached).
  if (Date.now() - state.startedAt > ctx.uploadMaxAgeMs) {
    await removeSession(ctx.storage, state.owner, name, uuid);
    throw uploadUnknown();
  }
  return { state, size: info.size };
}

/**
 * How many bytes this request may add to upload `uuid` (now `size` bytes) under
 * the byte limits; refuses at once (403) when its `Content-Length` is over.
 */
async function allowance(ctx: RegistryContext, request: Request, name: string, uuid: string, owner: string | undefined, size: number): Promise<number> {
  const allowed = await byteAllowance(ctx.storage, ctx.uploadLimits, name, uuid, owner, size);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > allowed) throw overByteLimit(ctx.uploadLimits);
  return allowed;
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

/** Most upload hashers kept in memory per process (each is a few hundred bytes). */
const LIVE_HASHERS = 1024;

/**
 * Take the in-memory hasher of upload `uuid` if it has seen exactly `size`
 * bytes with `algorithm`; it is removed, so only one request can continue it.
 */
function takeHasher(ctx: RegistryContext, name: string, uuid: string, size: number, algorithm: string): StreamHasher | undefined {
  const key = `${name}/${uuid}`;
  const live = ctx.liveHashers.get(key);
  if (!live) return undefined;
  ctx.liveHashers.delete(key);
  return live.offset === size && live.hasher.algorithm === algorithm ? live.hasher : undefined;
}

function keepHasher(ctx: RegistryContext, name: string, uuid: string, offset: number, hasher: StreamHasher): void {
  ctx.liveHashers.set(`${name}/${uuid}`, { hasher, offset });
  if (ctx.liveHashers.size > LIVE_HASHERS) ctx.liveHashers.delete(ctx.liveHashers.keys().next().value!);
}

/**
 * Verify the upload's first `size` bytes against `digest`, then make the blob
 * visible in `name`. The move publishes exactly those `size` bytes or nothing:
 * the driver refuses it (`conflict`) while another request is still writing to
 * the upload or when the upload grew meanwhile, so a committed blob always
 * hashes to its name (see the driver contract's "one writer, a final move").
 */
async function commit(ctx: RegistryContext, request: Request, state: Pick<UploadState, "name" | "uuid" | "owner">, digest: Digest, computed: string | undefined, size: number): Promise<Response> {
  const { name, uuid, owner } = state;
  const key = uploadData(name, uuid);
  if (computed === undefined) {
    const stream = await ctx.storage.read(key, { offset: 0, length: size });
    if (!stream) throw uploadUnknown();
    computed = await digestStream(digest.algorithm, stream);
  }
  if (computed !== digest.value) {
    // like Distribution: a failed commit cancels the upload
    await removeSession(ctx.storage, owner, name, uuid);
    throw new RegistryError("DIGEST_INVALID", "provided digest did not match uploaded content", 400, { digest: digest.value });
  }
  const blob = async (): Promise<PendingWrite> => ({ action: "blob", repository: name, digest: digest.value, size, caller: ctx.callerOf(request) });
  try {
    await checkedCommit(ctx.policy, ctx.storage, blob, async () => {
      // Order matters for crash safety: bytes first (invisible until linked), then the link.
      try {
        await ctx.storage.move(key, blobData(digest), { expectedSize: size });
      } catch (error) {
        if (error instanceof StorageError && error.code === "not_found") throw uploadUnknown();
        if (error instanceof StorageError && error.code === "conflict") throw busy(size);
        throw error;
      }
      // The move took the upload's one object: no need to list its directory.
      await forgetSession(ctx.storage, owner, uuid);
      await ctx.storage.write(layerLink(name, digest), new TextEncoder().encode(digest.value));
    });
  } catch (error) {
    // A refused blob will not be taken later either: its upload goes.
    if (error instanceof RegistryError && error.code === "DENIED") await removeSession(ctx.storage, owner, name, uuid);
    throw error;
  }
  await repositoryCreated(ctx, request, name, await ensureRepository(ctx.storage, name));
  await emitEvent(ctx, request, "push", () => blobTarget(ctx, request, name, digest.value, size));
  return blobCreated(ctx, request, name, digest);
}

/** Another request is writing to the upload, or it changed since this request read its size. */
function busy(size: number): RegistryError {
  return new RegistryError("RANGE_INVALID", "another request is writing to this upload; ask its status (GET) and continue from the Range it reports", 416, { size }, { Range: rangeValue(size) });
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
  if (mount) {
    const source = layerLink(mount.from, mount.digest);
    if ((await exists(ctx.storage, source)) && (await exists(ctx.storage, blobData(mount.digest)))) {
      const size = (await ctx.storage.stat(blobData(mount.digest)))?.size ?? 0;
      const blob = async (): Promise<PendingWrite> => ({ action: "blob", repository: name, digest: mount.digest.value, size, caller: ctx.callerOf(request) });
      await checkedCommit(ctx.policy, ctx.storage, blob, () => ctx.storage.write(layerLink(name, mount.digest), new TextEncoder().encode(mount.digest.value)));
      await repositoryCreated(ctx, request, name, await ensureRepository(ctx.storage, name));
      await emitEvent(ctx, request, "mount", () => blobTarget(ctx, request, name, mount.digest.value, size, mount.from));
      return blobCreated(ctx, request, name, mount.digest);
    }
  }
  const digestParam = url.searchParams.get("digest");
  const digest = digestParam === null ? undefined : parseDigest(digestParam);
  const uuid = crypto.randomUUID();
  const startedAt = Date.now();
  const caller = ctx.callerOf(request);
  const owner = caller === undefined ? undefined : callerKey(caller);
  // Check the count limits and create the session as one step (per process), so that
  // parallel POSTs of one caller cannot all pass the check before any is counted.
  await serialized(`repository ${name}`, () =>
    serialized(`caller ${owner ?? ""}`, async () => {
      await checkNewSession(ctx.storage, ctx.uploadLimits, name, owner);
      await registerSession(ctx.storage, owner, name, uuid);
      await ctx.storage.write(uploadData(name, uuid), new Uint8Array(0));
    }),
  );
  const state: UploadState = { name, uuid, offset: 0, startedAt };
  if (owner !== undefined) state.owner = owner;
  if (digest === undefined) {
    await emitEvent(ctx, request, "upload.started", () => ({ repository: name, uploadId: uuid }));
    return sessionResponse(ctx, request, state, 202);
  }
  let result;
  try {
    const maxBytes = await allowance(ctx, request, name, uuid, owner, 0);
    result = await appendBody(ctx.storage, request, uploadData(name, uuid), { expectedSize: 0, algorithm: digest.algorithm, create: false, maxBytes, tooLarge: () => overByteLimit(ctx.uploadLimits), received: ctx.uploadBytes });
    return await commit(ctx, request, state, digest, result.hasher.digest(), result.size);
  } catch (error) {
    // no session was handed out, so nobody could resume this one
    await removeSession(ctx.storage, owner, name, uuid).catch(() => {});
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
  const { state, size } = await loadSession(ctx, url, name, uuid);
  if (state.offset !== size) throw offsetMismatch(size);
  checkContentRange(request, size);
  // Continue this process's hash of the upload when it has seen every byte so far.
  const live = takeHasher(ctx, name, uuid, size, "sha256") ?? (size === 0 ? createHasher("sha256") : undefined);
  const maxBytes = await allowance(ctx, request, name, uuid, state.owner, size);
  const result = await appendBody(ctx.storage, request, uploadData(name, uuid), {
    expectedSize: size, algorithm: "sha256", hasher: live, create: false, maxBytes, tooLarge: () => overByteLimit(ctx.uploadLimits), received: ctx.uploadBytes,
  });
  const next = moved(state, result.size);
  if (live) {
    keepHasher(ctx, name, uuid, result.size, live);
    // The digest of every byte so far rides in the signed state: any process can commit without re-reading.
    next.digest = live.clone().digest();
  } else if (result.written === 0 && state.digest) next.digest = state.digest;
  return sessionResponse(ctx, request, next, 202);
}

/** `PUT ?digest=`: append an optional final chunk, verify the digest, commit. */
export async function putUpload(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const digestParam = url.searchParams.get("digest");
  const { state, size } = await loadSession(ctx, url, name, uuid);
  if (digestParam === null) throw new RegistryError("DIGEST_INVALID", "the digest query parameter is required");
  const digest = parseDigest(digestParam);
  if (state.offset !== size) throw offsetMismatch(size);
  checkContentRange(request, size);
  const known = state.digest?.startsWith(`${digest.algorithm}:`) ? state.digest : undefined;
  const live = takeHasher(ctx, name, uuid, size, digest.algorithm);
  let computed: string | undefined = known;
  let total = size;
  if (request.body && request.headers.get("content-length") !== "0") {
    const hasher = live ?? (size === 0 ? createHasher(digest.algorithm) : undefined);
    const maxBytes = await allowance(ctx, request, name, uuid, state.owner, size);
    const result = await appendBody(ctx.storage, request, uploadData(name, uuid), {
      expectedSize: size, algorithm: digest.algorithm, hasher, create: false, maxBytes, tooLarge: () => overByteLimit(ctx.uploadLimits), received: ctx.uploadBytes,
    });
    total = result.size;
    if (hasher) computed = hasher.digest();
    else if (result.written > 0) computed = undefined;
  } else if (computed === undefined && live) {
    computed = live.digest();
  }
  return commit(ctx, request, state, digest, computed, total);
}

/** `GET` upload status: 204 with the current `Range` and a fresh `Location`. */
export async function uploadStatus(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const { state, size } = await loadSession(ctx, url, name, uuid);
  const next = state.offset === size ? state : moved(state, size);
  return sessionResponse(ctx, request, next, 204);
}

/** `DELETE`: cancel the upload (204). */
export async function cancelUpload(ctx: RegistryContext, request: Request, url: URL, name: string, uuid: string): Promise<Response> {
  const { state } = await loadSession(ctx, url, name, uuid);
  ctx.liveHashers.delete(`${name}/${uuid}`);
  await removeSession(ctx.storage, state.owner, name, uuid);
  await emitEvent(ctx, request, "upload.cancelled", () => ({ repository: name, uploadId: uuid }));
  return empty(204);
}
