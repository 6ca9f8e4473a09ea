/**
 * The base upload store: an upload is an object of its repository
 * (`uploadData`) written by appends, registered in the index of open uploads
 * (the limits, the sweep), and moved into place by its commit once its bytes
 * hash to the digest asked for. The signed `_state` that carries a session
 * between requests is the handler's (uploads.ts); nothing here is kept in
 * memory but the optional live hashers (a speed-up, rule 5 holds).
 *
 * @module
 */
import type { DigestAlgorithm } from "../../../oci/digest.js";
import { RegistryError } from "../../../oci/errors.js";
import { createHasher, digestStream, type StreamHasher } from "../../../oci/hash.js";
import { StorageError } from "../../../storage/driver.js";
import type { UploadSession, UploadStore } from "../types.js";
import { appendBody } from "./body-stream.js";
import type { BaseContext } from "./context.js";
import { ensureRepository, writeText } from "./storage-io.js";
import { byteAllowance, callerKey, checkNewSession, forgetSession, overByteLimit, registerSession, removeSession, serialized } from "./upload-limits.js";

/** Most upload hashers kept in memory per process (each is a few hundred bytes). */
const LIVE_HASHERS = 1024;

/** The 404 `BLOB_UPLOAD_UNKNOWN`. */
export function uploadUnknown(): RegistryError {
  return new RegistryError("BLOB_UPLOAD_UNKNOWN", "blob upload unknown to registry");
}

/** `Range: 0-<last byte>` as Distribution writes it (`0-0` when empty). */
export function rangeValue(size: number): string {
  return `0-${Math.max(0, size - 1)}`;
}

/** Another request is writing to the upload, or it changed since this request read its size. */
function busy(size: number): RegistryError {
  return new RegistryError("RANGE_INVALID", "another request is writing to this upload; ask its status (GET) and continue from the Range it reports", 416, { size }, { Range: rangeValue(size) });
}

/** The upload store over `ctx`. */
// Over 80 lines: one closure over the context and its live hashers; the methods are the store's, each short.
export function baseUploads(ctx: BaseContext): UploadStore {
  const { storage, layout, uploadLimits: limits } = ctx;

  /**
   * Take the in-memory hasher of upload `uuid` if it has seen exactly `size`
   * bytes with `algorithm`; it is removed, so only one request can continue it.
   */
  const takeHasher = (name: string, uuid: string, size: number, algorithm: DigestAlgorithm): StreamHasher | undefined => {
    const key = `${name}/${uuid}`;
    const live = ctx.liveHashers.get(key);
    if (!live) return undefined;
    ctx.liveHashers.delete(key);
    return live.offset === size && live.hasher.algorithm === algorithm ? live.hasher : undefined;
  };
  const keepHasher = (name: string, uuid: string, offset: number, hasher: StreamHasher): void => {
    ctx.liveHashers.set(`${name}/${uuid}`, { hasher, offset });
    if (ctx.liveHashers.size > LIVE_HASHERS) ctx.liveHashers.delete(ctx.liveHashers.keys().next().value!);
  };
  const remove = (name: string, session: UploadSession) => removeSession(storage, session.owner, name, session.uuid);

  return {
    async start(name, call) {
      const uuid = crypto.randomUUID();
      const startedAt = Date.now();
      const owner = call.caller === undefined ? undefined : callerKey(call.caller);
      // Check the count limits and create the session as one step (per process), so that
      // parallel POSTs of one caller cannot all pass the check before any is counted.
      await serialized(`repository ${name}`, () =>
        serialized(`caller ${owner ?? ""}`, async () => {
          await checkNewSession(storage, limits, name, owner);
          await registerSession(storage, owner, name, uuid);
          await storage.write(layout.uploadData(name, uuid), new Uint8Array(0));
        }),
      );
      return owner === undefined ? { uuid, startedAt } : { uuid, startedAt, owner };
    },

    async append(name, session, body, options) {
      const { uuid, owner } = session;
      const { expectedSize, algorithm } = options;
      const allowed = await byteAllowance(storage, limits, name, uuid, owner, expectedSize);
      if (options.declaredLength !== undefined && options.declaredLength > allowed) throw overByteLimit(limits);
      // Continue this process's hash of the upload when it has seen every byte so far.
      const hasher = takeHasher(name, uuid, expectedSize, algorithm) ?? (expectedSize === 0 ? createHasher(algorithm) : undefined);
      const result = await appendBody(storage, body, layout.uploadData(name, uuid), {
        expectedSize, algorithm, hasher, create: false, maxBytes: allowed, tooLarge: () => overByteLimit(limits), signal: options.signal,
      });
      if (!hasher) return { size: result.size, written: result.written };
      keepHasher(name, uuid, result.size, hasher);
      return { size: result.size, written: result.written, digest: hasher.clone().digest() };
    },

    async status(name, session) {
      const info = await storage.stat(layout.uploadData(name, session.uuid));
      if (!info) return undefined;
      // Too old by this registry's clock (abandoned ones go by the sweep and when a limit is reached).
      if (Date.now() - session.startedAt > ctx.uploadMaxAgeMs) {
        await remove(name, session);
        return undefined;
      }
      return info.size;
    },

    /**
     * The move publishes exactly `size` bytes or nothing: the driver refuses
     * it (`conflict`) while another request is still writing to the upload
     * or when the upload grew meanwhile, so a committed blob always hashes to
     * its name (see the driver contract's "one writer, a final move").
     */
    async commit(name, session, digest, { size, computed }) {
      const key = layout.uploadData(name, session.uuid);
      // Taken either way: a finished upload's hasher is not kept.
      const live = takeHasher(name, session.uuid, size, digest.algorithm);
      computed ??= live?.digest();
      if (computed === undefined) {
        const stream = await storage.read(key, { offset: 0, length: size });
        if (!stream) throw uploadUnknown();
        computed = await digestStream(digest.algorithm, stream);
      }
      if (computed !== digest.value) {
        // like Distribution: a failed commit cancels the upload
        await remove(name, session);
        throw new RegistryError("DIGEST_INVALID", "provided digest did not match uploaded content", 400, { digest: digest.value });
      }
      // Order matters for crash safety: bytes first (invisible until linked), then the link.
      try {
        await storage.move(key, layout.blobData(digest), { expectedSize: size });
      } catch (error) {
        if (error instanceof StorageError && error.code === "not_found") throw uploadUnknown();
        if (error instanceof StorageError && error.code === "conflict") throw busy(size);
        throw error;
      }
      // The move took the upload's one object: no need to list its directory.
      await forgetSession(storage, session.owner, session.uuid);
      await writeText(storage, layout.layerLink(name, digest), digest.value);
      return { digest, size, created: await ensureRepository(storage, name) };
    },

    async cancel(name, session) {
      ctx.liveHashers.delete(`${name}/${session.uuid}`);
      await remove(name, session);
    },
  };
}
