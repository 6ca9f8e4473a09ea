/**
 * Blobs of a proxied repository. A blob not linked here is fetched once: its
 * bytes go to the client and into the upload store below together, read in
 * lockstep (memory stays flat whatever either side's speed), hashed on both
 * ways; the stored copy becomes visible only after its digest matched (the
 * upload's commit), and the client's stream fails instead of ending when the
 * bytes do not match. Concurrent pulls of the same missing blob wait for that
 * one fetch.
 *
 * @module
 */
import type { Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { createHasher } from "../../oci/hash.js";
import { lockstepTee } from "../../util/lockstep-tee.js";
import type { BlobContent, BlobStore, RegistryStores, StoreCall } from "../stores/types.js";
import { outcomeHeaders, upstreamFailure, type PullThroughSettings } from "./common.js";
import type { PullThrough, ResolvedUpstream } from "./options.js";

function blobUnknown(digest: Digest): RegistryError {
  return new RegistryError("BLOB_UNKNOWN", "blob unknown to registry", 404, { digest: digest.value });
}

/** `blobs.stat` and `blobs.read` of the repositories `pt` covers, over `below`. */
export function proxiedBlobs(below: RegistryStores, pt: PullThrough, settings: PullThroughSettings): Pick<BlobStore, "stat" | "read"> {
  const upstreamCall = async <T>(up: ResolvedUpstream, what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw upstreamFailure(up, error, settings.log, what);
    }
  };

  /**
   * Bytes stored for another repository: the upstream must still confirm this
   * repository has them, or a digest alone would open any stored blob.
   */
  const linkStored = async (up: ResolvedUpstream, name: string, digest: Digest, call: StoreCall): Promise<boolean> => {
    const confirm = async () => {
      const found = await upstreamCall(up, "blob HEAD", () => up.upstream.headBlob(up.remoteName, digest.value));
      if (!found) throw blobUnknown(digest);
      return true;
    };
    return (await below.blobs.mount(name, undefined, digest, call, confirm)) !== undefined;
  };

  /**
   * Stream `body` into a fresh upload of `name` (registered like any upload,
   * so a crash leaves what `removeAbandonedUploads` clears), check size and
   * digest, then commit it. Nothing is visible unless every check passed.
   */
  const storeBlob = async (up: ResolvedUpstream, name: string, digest: Digest, body: ReadableStream<Uint8Array>, size: number | undefined, call: StoreCall): Promise<void> => {
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
        settings.log({ level: "warn", msg: "pull-through: upstream blob refused", prefix: up.prefix, repository: up.remoteName, digest: digest.value, computed: appended.digest, size: appended.size });
        throw new RegistryError("UNKNOWN", "the upstream registry sent a blob that failed verification", 502, { prefix: up.prefix });
      }
      await below.uploads.commit(name, session, digest, { size: appended.size, computed: appended.digest }, {});
    } catch (error) {
      await below.uploads.cancel(name, session, {}).catch(() => {});
      throw error;
    }
  };

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
      const found = await upstreamCall(up, "blob HEAD", () => up.upstream.headBlob(up.remoteName, digest.value));
      if (!found) return undefined;
      return { digest, size: found.size ?? -1, headers: outcomeHeaders("forwarded") };
    },

    async read(name, digest, options, call) {
      const up = pt.lookup(name);
      if (!up) return below.blobs.read(name, digest, options, call);
      const hit = async (outcome: "hit" | "stored"): Promise<BlobContent | undefined> => {
        const content = await below.blobs.read(name, digest, options, call);
        return content && { ...content, headers: outcomeHeaders(outcome) };
      };
      if (await below.blobs.stat(name, digest, call)) return hit("hit");
      const key = `blob ${name}@${digest.value}`;
      const running = pt.flights.get(key);
      if (running) {
        await running;
        return hit("hit");
      }
      try {
        if (await linkStored(up, name, digest, call)) return hit("stored");
      } catch (error) {
        if (error instanceof RegistryError && error.code === "BLOB_UNKNOWN") return undefined;
        throw error;
      }
      // Checked again with no await before the start: two pulls cannot both start a fetch.
      const started = pt.flights.get(key);
      if (started) {
        await started;
        return hit("hit");
      }
      let handOver!: (value: { stream: ReadableStream<Uint8Array>; size?: number } | Error) => void;
      const forClient = new Promise<{ stream: ReadableStream<Uint8Array>; size?: number } | Error>((resolve) => (handOver = resolve));
      const flight = pt.flights.start(key, async () => {
        let blob;
        try {
          blob = await up.upstream.getBlob(up.remoteName, digest.value);
        } catch (error) {
          const failure = upstreamFailure(up, error, settings.log, "blob GET");
          handOver(failure);
          throw failure;
        }
        if (!blob) {
          handOver(blobUnknown(digest));
          throw blobUnknown(digest);
        }
        const [toClient, toStore] = lockstepTee(blob.body);
        handOver({ stream: toClient, size: blob.size });
        await storeBlob(up, name, digest, toStore, blob.size, call);
      });
      const given = await forClient;
      // Not upstream either: a missing blob reads as undefined.
      if (given instanceof RegistryError && given.code === "BLOB_UNKNOWN") return undefined;
      if (given instanceof Error) throw given;
      if (options.range !== undefined) {
        // A part of a blob not stored yet: store it whole first, then answer the range from below.
        await given.stream.cancel();
        await flight;
        return hit("stored");
      }
      const content: BlobContent = { kind: "bytes", digest, size: given.size ?? -1, body: verified(given.stream, digest, given.size), headers: outcomeHeaders("stored") };
      return content;
    },
  };
}

/**
 * The client's copy: passed through while hashed; instead of ending, it fails
 * when the bytes do not hash to `digest` or their count is not `size`.
 */
function verified(source: ReadableStream<Uint8Array>, digest: Digest, size: number | undefined): ReadableStream<Uint8Array> {
  const hasher = createHasher(digest.algorithm);
  const reader = source.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          if ((size !== undefined && seen !== size) || hasher.digest() !== digest.value) {
            controller.error(new Error(`upstream bytes do not match ${digest.value}`));
          } else controller.close();
          return;
        }
        hasher.update(value);
        seen += value.byteLength;
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
