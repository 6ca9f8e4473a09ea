/**
 * The R2 driver inside workerd, on miniflare's local R2 bucket `BUCKET`
 * (bound by test/workerd/vitest.config.ts; run by scripts/runtimes.mjs):
 * the storage contract suite, then what is R2's own (multipart uploads with
 * parts of one size, part objects and locks hidden, a crashed writer's lock).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { StorageError, checked } from "../../src/storage/index.js";
import { toArrayBuffer } from "../../src/util/bytes.js";
import { r2Storage, type R2BucketLike, type R2MultipartUploadLike } from "../../src/storage/r2/index.js";
import { describeStorageContract } from "../../src/testing/index.js";

const bucket = env.BUCKET as R2BucketLike;
const MiB = 1024 * 1024;

/** Every bucket key under `root/`. */
async function rawKeys(root: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: root + "/", ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

function freshRoot(): string {
  return `t-${crypto.randomUUID()}`;
}

describeStorageContract(
  "r2 (workerd, miniflare's local R2)",
  async () => {
    const root = freshRoot();
    return {
      driver: r2Storage({ bucket, rootDirectory: root, partSize: 5 * MiB }),
      cleanup: async () => {
        const keys = await rawKeys(root);
        for (let i = 0; i < keys.length; i += 1000) await bucket.delete(keys.slice(i, i + 1000));
      },
    };
  },
  // 12 MiB: three parts of 5 MiB, the multipart path both ways. Inside workerd there is no process RSS to bound.
  { largeBytes: 12 * MiB, checkMemory: false },
);

/** The binding, counting the multipart uploads and the size of every part. */
function countingBucket(): { bucket: R2BucketLike; uploads: number[][] } {
  const uploads: number[][] = [];
  const counted: R2BucketLike = {
    head: (k) => bucket.head(k),
    get: (k, o) => bucket.get(k, o),
    put: (k, v, o) => bucket.put(k, v, o),
    delete: (k) => bucket.delete(k),
    list: (o) => bucket.list(o),
    async createMultipartUpload(key) {
      const upload = await bucket.createMultipartUpload(key);
      const sizes: number[] = [];
      uploads.push(sizes);
      const wrapped: R2MultipartUploadLike = {
        uploadPart: (n, value) => (sizes.push(value.byteLength), upload.uploadPart(n, value)),
        abort: () => upload.abort(),
        complete: (parts) => upload.complete(parts),
      };
      return wrapped;
    },
  };
  return { bucket: counted, uploads };
}

function pattern(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

async function bytesOf(stream: ReadableStream<Uint8Array> | undefined): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** SHA-256 in hex: large byte arrays are compared by digest (vitest's deep equality walks every index). */
async function sha256(bytes: Uint8Array | ReadableStream<Uint8Array> | undefined): Promise<string> {
  const data = bytes instanceof Uint8Array ? bytes : await bytesOf(bytes);
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", toArrayBuffer(data)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A stream of `bytes` in chunks of `chunk` bytes. */
function chunked(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

describe("r2Storage: what is R2's own", () => {
  it("a write over one part (streamed, or bytes) is a multipart upload whose parts are all partSize but the last", async () => {
    const root = freshRoot();
    const counting = countingBucket();
    const store = checked(r2Storage({ bucket: counting.bucket, rootDirectory: root, partSize: 5 * MiB }));
    const data = pattern(12 * MiB + 7, 1);
    expect(await store.write("blobs/big", chunked(data, 300_000))).toBe(data.byteLength);
    expect(counting.uploads).toEqual([[5 * MiB, 5 * MiB, 2 * MiB + 7]]);
    expect(await sha256(await store.read("blobs/big"))).toBe(await sha256(data));
    expect([...(await bytesOf(await store.read("blobs/big", { offset: 5 * MiB - 3, length: 10 })))]).toEqual([...data.subarray(5 * MiB - 3, 5 * MiB + 7)]);
    expect(await rawKeys(root)).toEqual([`${root}/blobs/big`]);
    // A Uint8Array body is cut into views, not copied: each part must carry its own bytes only.
    const bytes = pattern(11 * MiB, 3);
    expect(await store.write("blobs/bytes", bytes.subarray(MiB))).toBe(10 * MiB);
    expect(counting.uploads[1]).toEqual([5 * MiB, 5 * MiB]);
    expect(await sha256(await store.read("blobs/bytes"))).toBe(await sha256(bytes.subarray(MiB)));
  });

  it("an upload of several appends is stored as part objects, hidden from list, and moved whole by a multipart upload", async () => {
    const root = freshRoot();
    const counting = countingBucket();
    const store = checked(r2Storage({ bucket: counting.bucket, rootDirectory: root, partSize: 5 * MiB }));
    const data = pattern(11 * MiB, 2);
    let size = await store.append("uploads/u1/data", new Uint8Array(0));
    for (const cut of [3 * MiB, 9 * MiB, 11 * MiB]) {
      size = await store.append("uploads/u1/data", chunked(data.subarray(size, cut), 64 * 1024), { expectedSize: size, create: false });
      expect(size).toBe(cut);
    }
    expect((await rawKeys(root)).map((k) => k.slice(root.length + 1))).toEqual([
      "uploads/u1/data!0000000000000000",
      "uploads/u1/data!0000000003145728",
      "uploads/u1/data!0000000008388608",
      "uploads/u1/data!0000000009437184",
    ]);
    expect(await store.list("uploads")).toEqual({ keys: ["uploads/u1/data"], truncated: false });
    expect((await store.stat("uploads/u1/data"))?.size).toBe(11 * MiB);
    expect([...(await bytesOf(await store.read("uploads/u1/data", { offset: 3 * MiB - 2, length: 4 })))]).toEqual([...data.subarray(3 * MiB - 2, 3 * MiB + 2)]);
    expect(counting.uploads).toEqual([]);

    await store.move("uploads/u1/data", "blobs/sha256/ab", { expectedSize: 11 * MiB });
    expect(counting.uploads).toEqual([[5 * MiB, 5 * MiB, 1 * MiB]]);
    expect(await sha256(await store.read("blobs/sha256/ab"))).toBe(await sha256(data));
    expect(await rawKeys(root)).toEqual([`${root}/blobs/sha256/ab`]);
  });

  it("a crashed writer's lock refuses appends and moves with conflict until deletePrefix removes it", async () => {
    const root = freshRoot();
    const store = checked(r2Storage({ bucket, rootDirectory: root, partSize: 5 * MiB }));
    await store.append("up/x/data", new TextEncoder().encode("abc"));
    await bucket.put(`${root}/up/x/data!writer`, "{}");
    const refused = await store.append("up/x/data", new TextEncoder().encode("d"), { expectedSize: 3 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StorageError);
    expect((refused as StorageError).code).toBe("conflict");
    expect(((await store.move("up/x/data", "done", { expectedSize: 3 }).catch((e: unknown) => e)) as StorageError).code).toBe("conflict");
    expect(await store.list("up")).toEqual({ keys: ["up/x/data"], truncated: false });
    await store.deletePrefix("up");
    expect(await rawKeys(root)).toEqual([]);
  });

  it("refuses options it cannot honour with a TypeError", () => {
    expect(() => r2Storage({ bucket, partSize: 4 * MiB })).toThrow(/partSize/);
    expect(() => r2Storage({ bucket, concurrency: 0 })).toThrow(/concurrency/);
    expect(() => r2Storage({ bucket: {} as R2BucketLike })).toThrow(/R2 bucket binding/);
    expect(() => r2Storage({ bucket, rootDirectory: "a b" })).toThrow(/rootDirectory/);
  });
});
