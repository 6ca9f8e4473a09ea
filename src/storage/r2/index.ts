/**
 * A storage driver on a Cloudflare R2 bucket, through the Workers binding
 * (`env.BUCKET`), for a registry that runs in a Worker. Runtime-neutral: it
 * calls only the binding's methods, typed structurally ({@link R2BucketLike}),
 * so neither `@cloudflare/workers-types` nor `node:` modules are needed.
 *
 * How the contract maps onto R2 (see docs/storage.md, "R2"):
 * - `write` (`write.ts`): one `put` for bodies up to `partSize`, a multipart
 *   upload beyond, aborted on failure. R2 stores only values of a known
 *   length, so a body is buffered a part at a time: memory per write is at
 *   most `partSize × (concurrency + 1)`.
 * - `append` (`append.ts`): every append becomes part objects
 *   `<key>!<offset>`, created with `If-None-Match: *`; the object is their
 *   concatenation (`read.ts` streams them in order, ranges included).
 * - `move` (`move.ts`): R2's binding has no copy, so the source is streamed
 *   into the target (one `put`, or a multipart upload) and then deleted.
 * - One writer, a final move: `append` and `move` of a key hold its writer
 *   lock `<key>!writer` (`lock.ts`), so they exclude each other across Workers.
 * - `list` (`list.ts`), `delete` and `deletePrefix` (`delete.ts`) hide and
 *   remove part objects and locks with their key.
 *
 * @module
 */
import type { StorageDriver } from "../driver.js";
import { append } from "./append.js";
import type { R2BucketLike } from "./bucket.js";
import type { R2Context } from "./context.js";
import { deleteKey, deletePrefix } from "./delete.js";
import { list } from "./list.js";
import { move } from "./move.js";
import { read, stat } from "./read.js";
import { write } from "./write.js";

export type {
  R2BucketLike,
  R2ListPage,
  R2MultipartUploadLike,
  R2ObjectInfo,
  R2ObjectWithBody,
  R2Precondition,
  R2UploadedPartInfo,
} from "./bucket.js";

/** The smallest part R2 takes in a multipart upload (all but the last part). */
const MIN_PART = 5 * 1024 * 1024;
/** The largest part R2 takes. */
const MAX_PART = 5 * 1024 * 1024 * 1024;

/** Options of {@link r2Storage}. */
export interface R2StorageOptions {
  /** The bucket binding, e.g. `env.BUCKET` for `[[r2_buckets]] binding = "BUCKET"`. */
  bucket: R2BucketLike;
  /** Prefix for every key, e.g. to share a bucket. */
  rootDirectory?: string;
  /**
   * Multipart part size, 5 MiB to 5 GiB; default 8 MiB. Objects up to one part
   * are a single `put`. R2 allows 10 000 parts, so 8 MiB parts store objects
   * up to ~78 GiB. Each write buffers up to `concurrency + 1` parts: mind the
   * Worker's 128 MB of memory.
   */
  partSize?: number;
  /** Parts uploaded at once by one write or move; default 2. */
  concurrency?: number;
}

/**
 * A {@link StorageDriver} on an R2 bucket binding.
 *
 * ```ts
 * import { r2Storage } from "registry-kit/storage/r2";
 * const storage = r2Storage({ bucket: env.BUCKET });
 * ```
 */
export function r2Storage(options: R2StorageOptions): StorageDriver {
  const ctx = createContext(options);
  return {
    name: "r2",
    stat: (key) => stat(ctx, key),
    read: (key, range) => read(ctx, key, range),
    write: (key, body, writeOptions) => write(ctx, key, body, writeOptions),
    append: (key, body, appendOptions) => append(ctx, key, body, appendOptions),
    move: (from, to, moveOptions) => move(ctx, from, to, moveOptions),
    delete: (key) => deleteKey(ctx, key),
    deletePrefix: (prefix) => deletePrefix(ctx, prefix),
    list: (prefix, listOptions) => list(ctx, prefix, listOptions),
  };
}

function createContext(options: R2StorageOptions): R2Context {
  const { bucket } = options;
  if (!bucket || typeof bucket.head !== "function" || typeof bucket.createMultipartUpload !== "function") {
    throw new TypeError("r2Storage: bucket must be an R2 bucket binding (env.BUCKET)");
  }
  const partSize = options.partSize ?? 8 * 1024 * 1024;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART || partSize > MAX_PART) {
    throw new TypeError("r2Storage: partSize must be an integer from 5 MiB to 5 GiB");
  }
  const concurrency = options.concurrency ?? 2;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError("r2Storage: concurrency must be a positive integer");
  const root = (options.rootDirectory ?? "").replace(/^\/+|\/+$/g, "");
  if (root && !/^[A-Za-z0-9._@:+=/-]+$/.test(root)) throw new TypeError("r2Storage: rootDirectory has invalid characters");
  return { bucket, root: root ? root + "/" : "", partSize, concurrency };
}
