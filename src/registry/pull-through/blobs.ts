/**
 * Blob GET and HEAD of a proxied repository. A blob not linked here is fetched
 * once: its bytes go to the client and into storage together, read in lockstep
 * (memory stays flat whatever either side's speed), hashed on both ways; the
 * stored copy becomes visible only after its digest matched (an upload object
 * moved into place, the storage's one-writer/final-move contract), and the
 * client's copy holds back its last chunk until the digest matched
 * (verified-body.ts), so a mismatch is never a complete body.
 * Concurrent pulls of the same missing blob wait for that one fetch, and
 * concurrent asks for its `HEAD` upstream share one.
 *
 * @module
 */
import type { RegistryContext } from "../context.js";
import type { Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { createHasher } from "../../oci/hash.js";
import { baseHeaders } from "../../oci/wire.js";
import { knownLength } from "../../http/known-length.js";
import { getBlob, headBlob } from "../blobs.js";
import { blobTarget, emitEvent } from "../events.js";
import { blobData, layerLink, uploadData } from "../layout.js";
import { digestHeaders } from "../responses.js";
import { ensureRepository, exists } from "../storage-io.js";
import { registerSession, removeSession } from "../upload-limits.js";
import { lockstepTee } from "../../util/lockstep-tee.js";
import { marked, upstreamFailure } from "./common.js";
import { BlobMismatch, verifiedBody } from "./verified-body.js";
import type { PullThrough, ResolvedUpstream } from "./options.js";

function blobUnknown(digest: Digest): RegistryError {
  return new RegistryError("BLOB_UNKNOWN", "blob unknown to registry", 404, { digest: digest.value });
}

/** `GET`/`HEAD /v2/<name>/blobs/<digest>` of a repository `up` covers. */
export async function pullBlob(ctx: RegistryContext, pt: PullThrough, up: ResolvedUpstream, request: Request, name: string, digest: Digest): Promise<Response> {
  const head = request.method.toUpperCase() === "HEAD";
  if (await exists(ctx.storage, layerLink(name, digest))) return marked(head ? await headBlob(ctx, name, digest) : await getBlob(ctx, request, name, digest), "hit");
  const key = `blob ${name}@${digest.value}`;
  const follow = async (running: Promise<void>) => {
    await running;
    return marked(head ? await headBlob(ctx, name, digest) : await getBlob(ctx, request, name, digest), "hit");
  };
  const running = pt.flights.get(key);
  if (running) return follow(running);
  if (await exists(ctx.storage, blobData(digest))) {
    // The bytes are here for another repository; the upstream must still confirm
    // this repository has them, or a digest alone would open any stored blob.
    const found = await askHead(ctx, pt, up, name, digest);
    if (!found) throw blobUnknown(digest);
    await ctx.storage.write(layerLink(name, digest), new TextEncoder().encode(digest.value));
    await ensureRepository(ctx.storage, name);
    return marked(head ? await headBlob(ctx, name, digest) : await getBlob(ctx, request, name, digest), "stored");
  }
  if (head) {
    // A HEAD fetches nothing: the upstream's answer, nothing stored.
    const found = await askHead(ctx, pt, up, name, digest);
    if (!found) throw blobUnknown(digest);
    const headers = blobHeaders(digest, found.size);
    return marked(new Response(null, { status: 200, headers }), "forwarded");
  }

  // Checked again with no await before the start: two pulls cannot both start a fetch.
  const started = pt.flights.get(key);
  if (started) return follow(started);
  let handOver!: (value: { stream: ReadableStream<Uint8Array>; size?: number } | Error) => void;
  const forClient = new Promise<{ stream: ReadableStream<Uint8Array>; size?: number } | Error>((resolve) => (handOver = resolve));
  const flight = pt.flights.start(key, async () => {
    let blob;
    try {
      blob = await up.upstream.getBlob(up.remoteName, digest.value);
    } catch (error) {
      const failure = upstreamFailure(up, error, ctx.log, "blob GET");
      handOver(failure);
      throw failure;
    }
    if (!blob) {
      handOver(blobUnknown(digest));
      throw blobUnknown(digest);
    }
    const [toClient, toStore] = lockstepTee(blob.body);
    handOver({ stream: toClient, size: blob.size });
    await storeBlob(ctx, up, name, digest, toStore, blob.size);
  });
  const given = await forClient;
  if (given instanceof Error) throw given;
  if (request.headers.has("range") || given.size === undefined) {
    // A part of a blob not stored yet, or a blob of unknown length (a cut chunked body can look whole,
    // workerd ends one cleanly): store it whole and verified first, then answer from storage.
    await given.stream.cancel();
    await flight;
    return marked(await getBlob(ctx, request, name, digest), "stored");
  }
  const size = given.size;
  let body: ReadableStream<Uint8Array> | undefined;
  try {
    body = await verifiedBody(given.stream, digest, size);
  } catch (error) {
    throw error instanceof BlobMismatch ? blobRefused(ctx, up, digest, error.message) : upstreamFailure(up, error, ctx.log, "blob body");
  }
  if (!body) throw blobRefused(ctx, up, digest, "the whole body read ahead does not match");
  const headers = blobHeaders(digest, size);
  // Served from the upstream's stream rather than by getBlob: the pull event is ours to send.
  await emitEvent(ctx, request, "pull", () => blobTarget(ctx, request, name, digest.value, size));
  return marked(new Response(knownLength(body, size), { status: 200, headers }), "stored");
}

/** 502 for upstream bytes that failed verification; the reason goes to the log. */
function blobRefused(ctx: RegistryContext, up: ResolvedUpstream, digest: Digest, reason: string, computed?: string, size?: number): RegistryError {
  ctx.log({ level: "warn", msg: "pull-through: upstream blob refused", prefix: up.prefix, repository: up.remoteName, digest: digest.value, reason, ...(computed ? { computed, size } : {}) });
  return new RegistryError("UNKNOWN", "the upstream registry sent a blob that failed verification", 502, { prefix: up.prefix });
}

function blobHeaders(digest: Digest, size: number | undefined): Headers {
  const headers = baseHeaders(digestHeaders(digest.value));
  headers.set("Content-Type", "application/octet-stream");
  if (size !== undefined) headers.set("Content-Length", String(size));
  headers.set("ETag", `"${digest.value}"`);
  return headers;
}

/** The upstream's blob `HEAD`, one at a time: concurrent asks for one blob of one repository share the answer. */
function askHead(ctx: RegistryContext, pt: PullThrough, up: ResolvedUpstream, name: string, digest: Digest): Promise<{ size?: number } | undefined> {
  return pt.flights.join(`blob HEAD ${name}@${digest.value}`, async () => {
    try {
      return await up.upstream.headBlob(up.remoteName, digest.value);
    } catch (error) {
      throw upstreamFailure(up, error, ctx.log, "blob HEAD");
    }
  });
}

/**
 * Stream `body` into a fresh upload object of `name` (registered like an
 * upload, so a crash leaves what `removeAbandonedUploads` clears), check size
 * and digest, then move it into place and link it. Nothing is visible unless
 * every check passed.
 */
async function storeBlob(ctx: RegistryContext, up: ResolvedUpstream, name: string, digest: Digest, body: ReadableStream<Uint8Array>, size: number | undefined): Promise<void> {
  const uuid = crypto.randomUUID();
  const key = uploadData(name, uuid);
  const hasher = createHasher(digest.algorithm);
  const reader = body.getReader();
  let upstreamFailed = false;
  const hashed = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read().catch((error: unknown) => {
          upstreamFailed = true;
          throw error;
        });
        if (done) return controller.close();
        hasher.update(value);
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  await registerSession(ctx.storage, undefined, name, uuid);
  try {
    let stored: number;
    try {
      stored = await ctx.storage.append(key, hashed, { expectedSize: 0, create: true });
    } catch (error) {
      // Let the client's side of the tee go on alone.
      await reader.cancel(error).catch(() => {});
      throw upstreamFailed ? upstreamFailure(up, error, ctx.log, "blob body") : error;
    }
    const computed = hasher.digest();
    if ((size !== undefined && stored !== size) || computed !== digest.value) {
      throw blobRefused(ctx, up, digest, "stored copy does not match", computed, stored);
    }
    await ctx.storage.move(key, blobData(digest), { expectedSize: stored });
    await ctx.storage.write(layerLink(name, digest), new TextEncoder().encode(digest.value));
    await ensureRepository(ctx.storage, name);
  } finally {
    await removeSession(ctx.storage, undefined, name, uuid).catch(() => {});
  }
}
