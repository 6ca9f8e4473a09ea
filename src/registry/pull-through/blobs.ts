/**
 * Blobs of a proxied repository. A blob not linked here is fetched once: its
 * bytes go to the client and into the upload store below together, read in
 * lockstep (memory stays flat whatever either side's speed), hashed on both
 * ways; the stored copy becomes visible only after its digest matched (the
 * upload's commit), and the client's copy holds back its last chunk until
 * the digest matched (verified-body.ts), so a mismatch is never a complete
 * body. Concurrent pulls of the same missing blob wait for that one fetch,
 * and concurrent asks for its `HEAD` upstream share one.
 *
 * @module
 */
import type { Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { knownLength } from "../../http/known-length.js";
import { lockstepTee } from "../../util/lockstep-tee.js";
import type { BlobContent, BlobReadOptions, BlobStore, RegistryStores, StoreCall } from "../stores/types.js";
import { outcomeHeaders, upstreamFailure, type PullThroughSettings } from "./common.js";
import { BlobMismatch, verifiedBody } from "./verified-body.js";
import type { PullThrough, ResolvedUpstream } from "./options.js";

function blobUnknown(digest: Digest): RegistryError {
  return new RegistryError("BLOB_UNKNOWN", "blob unknown to registry", 404, { digest: digest.value });
}

/** What the blob side of the cache works with. */
interface Proxy {
  below: RegistryStores;
  pt: PullThrough;
  settings: PullThroughSettings;
}

async function upstreamCall<T>(proxy: Proxy, up: ResolvedUpstream, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw upstreamFailure(up, error, proxy.settings.log, what);
  }
}

/** The upstream's blob `HEAD`, one at a time: concurrent asks for one blob of one repository share the answer. */
function askHead(proxy: Proxy, up: ResolvedUpstream, name: string, digest: Digest): Promise<{ size?: number } | undefined> {
  return proxy.pt.flights.join(`blob HEAD ${name}@${digest.value}`, () => upstreamCall(proxy, up, "blob HEAD", () => up.upstream.headBlob(up.remoteName, digest.value)));
}

/** 502 for upstream bytes that failed verification; the reason goes to the log. */
function blobRefused(proxy: Proxy, up: ResolvedUpstream, digest: Digest, reason: string, computed?: string, size?: number): RegistryError {
  proxy.settings.log({ level: "warn", msg: "pull-through: upstream blob refused", prefix: up.prefix, repository: up.remoteName, digest: digest.value, reason, ...(computed ? { computed, size } : {}) });
  return new RegistryError("UNKNOWN", "the upstream registry sent a blob that failed verification", 502, { prefix: up.prefix });
}

/**
 * Link bytes stored for another repository: the upstream must still confirm
 * this repository has them, or a digest alone would open any stored blob.
 * False when the bytes are not stored here at all.
 */
async function linkStored(proxy: Proxy, up: ResolvedUpstream, name: string, digest: Digest, call: StoreCall): Promise<boolean> {
  const confirm = async () => {
    const found = await askHead(proxy, up, name, digest);
    if (!found) throw blobUnknown(digest);
    return true;
  };
  return (await proxy.below.blobs.mount(name, undefined, digest, call, confirm)) !== undefined;
}

/**
 * Stream `body` into a fresh upload of `name` (registered like any upload,
 * so a crash leaves what `removeAbandonedUploads` clears), check size and
 * digest, then commit it. Nothing is visible unless every check passed.
 */
async function storeBlob(proxy: Proxy, up: ResolvedUpstream, name: string, digest: Digest, body: ReadableStream<Uint8Array>, size: number | undefined): Promise<void> {
  const { below, settings } = proxy;
  const reader = body.getReader();
  let upstreamFailed = false;
  const source = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read().catch((error: unknown) => {
          upstreamFailed = true;
          throw error;
        });
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const session = await below.uploads.start(name, {}, { single: true });
  try {
    let appended;
    try {
      appended = await below.uploads.append(name, session, source, { expectedSize: 0, algorithm: digest.algorithm }, {});
    } catch (error) {
      // Let the client's side of the tee go on alone.
      await reader.cancel(error).catch(() => {});
      throw upstreamFailed ? upstreamFailure(up, error, settings.log, "blob body") : error;
    }
    if ((size !== undefined && appended.size !== size) || appended.digest !== digest.value) {
      throw blobRefused(proxy, up, digest, "stored copy does not match", appended.digest, appended.size);
    }
    await below.uploads.commit(name, session, digest, { size: appended.size, computed: appended.digest }, {});
  } catch (error) {
    await below.uploads.cancel(name, session, {}).catch(() => {});
    throw error;
  }
}

/** The blob, as the stores below hold it now, marked with `outcome`. */
async function fromBelow(proxy: Proxy, name: string, digest: Digest, options: BlobReadOptions, call: StoreCall, outcome: "hit" | "stored"): Promise<BlobContent | undefined> {
  const content = await proxy.below.blobs.read(name, digest, options, call);
  return content && { ...content, headers: outcomeHeaders(outcome) };
}

/**
 * Fetch a blob missing here (the caller checked no fetch of it is under way,
 * with no await since): the client reads the upstream's bytes, verified, while
 * they are stored. A range is answered from below once the whole blob is stored.
 */
async function fetchBlob(proxy: Proxy, up: ResolvedUpstream, key: string, name: string, digest: Digest, options: BlobReadOptions, call: StoreCall): Promise<BlobContent | undefined> {
  let handOver!: (value: { stream: ReadableStream<Uint8Array>; size?: number } | Error) => void;
  const forClient = new Promise<{ stream: ReadableStream<Uint8Array>; size?: number } | Error>((resolve) => (handOver = resolve));
  const flight = proxy.pt.flights.start(key, async () => {
    let blob;
    try {
      blob = await up.upstream.getBlob(up.remoteName, digest.value);
    } catch (error) {
      const failure = upstreamFailure(up, error, proxy.settings.log, "blob GET");
      handOver(failure);
      throw failure;
    }
    if (!blob) {
      handOver(blobUnknown(digest));
      throw blobUnknown(digest);
    }
    const [toClient, toStore] = lockstepTee(blob.body);
    handOver({ stream: toClient, size: blob.size });
    await storeBlob(proxy, up, name, digest, toStore, blob.size);
  });
  const given = await forClient;
  // Not upstream either: a missing blob reads as undefined.
  if (given instanceof RegistryError && given.code === "BLOB_UNKNOWN") return undefined;
  if (given instanceof Error) throw given;
  if (options.range !== undefined || given.size === undefined) {
    // A part of a blob not stored yet, or a blob of unknown length (a cut chunked body can look whole,
    // workerd ends one cleanly): store it whole and verified first, then answer from below.
    await given.stream.cancel();
    await flight;
    return fromBelow(proxy, name, digest, options, call, "stored");
  }
  const size = given.size;
  let body: ReadableStream<Uint8Array> | undefined;
  try {
    body = await verifiedBody(given.stream, digest, size);
  } catch (error) {
    throw error instanceof BlobMismatch ? blobRefused(proxy, up, digest, error.message) : upstreamFailure(up, error, proxy.settings.log, "blob body");
  }
  if (!body) throw blobRefused(proxy, up, digest, "the whole body read ahead does not match");
  return { kind: "bytes", digest, size, body: knownLength(body, size), headers: outcomeHeaders("stored") };
}

/** `blobs.stat` and `blobs.read` of the repositories `pt` covers, over `below`. */
export function proxiedBlobs(below: RegistryStores, pt: PullThrough, settings: PullThroughSettings): Pick<BlobStore, "stat" | "read"> {
  const proxy: Proxy = { below, pt, settings };
  return {
    async stat(name, digest, call) {
      const up = pt.lookup(name);
      if (!up) return below.blobs.stat(name, digest, call);
      const local = await below.blobs.stat(name, digest, call);
      if (local) return { ...local, headers: outcomeHeaders("hit") };
      const running = pt.flights.get(`blob ${name}@${digest.value}`);
      if (running) {
        await running;
        const stored = await below.blobs.stat(name, digest, call);
        return stored && { ...stored, headers: outcomeHeaders("hit") };
      }
      // A HEAD fetches nothing: the upstream's answer, nothing stored.
      const found = await askHead(proxy, up, name, digest);
      return found && { digest, size: found.size ?? -1, headers: outcomeHeaders("forwarded") };
    },

    async read(name, digest, options, call) {
      const up = pt.lookup(name);
      if (!up) return below.blobs.read(name, digest, options, call);
      if (await below.blobs.stat(name, digest, call)) return fromBelow(proxy, name, digest, options, call, "hit");
      const key = `blob ${name}@${digest.value}`;
      const running = pt.flights.get(key);
      if (running) return running.then(() => fromBelow(proxy, name, digest, options, call, "hit"));
      try {
        if (await linkStored(proxy, up, name, digest, call)) return fromBelow(proxy, name, digest, options, call, "stored");
      } catch (error) {
        if (error instanceof RegistryError && error.code === "BLOB_UNKNOWN") return undefined;
        throw error;
      }
      // Checked again with no await before the start: two pulls cannot both start a fetch.
      const started = pt.flights.get(key);
      if (started) return started.then(() => fromBelow(proxy, name, digest, options, call, "hit"));
      return fetchBlob(proxy, up, key, name, digest, options, call);
    },
  };
}
