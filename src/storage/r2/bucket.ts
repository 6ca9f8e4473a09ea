/**
 * The part of the Workers R2 binding (`env.MY_BUCKET`, an `R2Bucket`) the
 * driver uses, declared structurally so that registry-kit needs no
 * `@cloudflare/workers-types` at run time or for its own types: a binding
 * typed by workers-types, miniflare's local R2, or any object with these
 * methods will do.
 *
 * @module
 */

/** What R2 tells about a stored object (an `R2Object`). */
export interface R2ObjectInfo {
  /** The object's key in the bucket. */
  readonly key: string;
  /** Size in bytes. */
  readonly size: number;
  /** The ETag, without quotes. */
  readonly etag: string;
  /** When the object was written. */
  readonly uploaded: Date;
}

/** An object with its bytes (an `R2ObjectBody`). */
export interface R2ObjectWithBody extends R2ObjectInfo {
  /** The object's bytes (or the range asked for). */
  readonly body: ReadableStream<Uint8Array>;
}

/**
 * A precondition of `get` or `put`: the `onlyIf` option. R2 accepts an object
 * or `Headers` (`If-Match`, `If-None-Match: *`); the driver passes `Headers`.
 */
export type R2Precondition = Headers | {
  /** Only when the object's ETag is this one. */
  etagMatches?: string;
  /** Only when the object's ETag is not this one (`*`: only when there is no object). */
  etagDoesNotMatch?: string;
};

/** One uploaded part of a multipart upload. */
export interface R2UploadedPartInfo {
  /** The part's number, from 1. */
  partNumber: number;
  /** The part's ETag, as `uploadPart` answered it. */
  etag: string;
}

/** A multipart upload in progress (an `R2MultipartUpload`). */
export interface R2MultipartUploadLike {
  /** Upload part `partNumber` (from 1). Every part but the last must be at least 5 MiB, and all of one size. */
  uploadPart(partNumber: number, value: Uint8Array): Promise<R2UploadedPartInfo>;
  /** Give up the upload and its parts. */
  abort(): Promise<void>;
  /** Make the object from `parts`, atomically. */
  complete(parts: R2UploadedPartInfo[]): Promise<R2ObjectInfo>;
}

/** One page of `list`. */
export interface R2ListPage {
  /** The objects, in key order. */
  objects: R2ObjectInfo[];
  /** True when more objects follow; pass `cursor` to get them. */
  truncated: boolean;
  /** Where the next page starts (when `truncated`). */
  cursor?: string;
}

/**
 * The R2 bucket binding, as much of it as `r2Storage` calls. `env.BUCKET` of
 * a Worker with an `[[r2_buckets]]` binding is one.
 */
export interface R2BucketLike {
  /** The object's metadata, or `null`. */
  head(key: string): Promise<R2ObjectInfo | null>;
  /**
   * The object (a range of it), or `null` when it is missing; without its body
   * when `onlyIf` failed.
   */
  get(key: string, options?: { range?: { offset: number; length?: number }; onlyIf?: R2Precondition }): Promise<R2ObjectWithBody | R2ObjectInfo | null>;
  /** Store an object whole; `null` when `onlyIf` failed (nothing stored). */
  put(key: string, value: Uint8Array | string, options?: { onlyIf?: R2Precondition }): Promise<R2ObjectInfo | null>;
  /** Delete objects (up to 1000 keys in one call); missing ones are no error. */
  delete(keys: string | string[]): Promise<void>;
  /** List objects by key prefix, in key order. */
  list(options?: { prefix?: string; startAfter?: string; cursor?: string; limit?: number }): Promise<R2ListPage>;
  /** Start a multipart upload of `key`. */
  createMultipartUpload(key: string): Promise<R2MultipartUploadLike>;
}
