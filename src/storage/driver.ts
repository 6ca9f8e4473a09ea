/**
 * The storage driver contract.
 *
 * A driver stores opaque objects under `/`-separated keys. It knows nothing of
 * OCI: the registry's layout (repositories, tags, manifests, blobs, uploads)
 * lives above it in `src/registry/layout.ts`. Every driver must pass the shared
 * contract suite exported from `registry-kit/testing`.
 *
 * Keys are validated once, by {@link assertValidKey}, before any driver sees
 * them; drivers may rely on that.
 *
 * @module
 */

/** What {@link StorageDriver.stat} tells about an object. */
export interface ObjectInfo {
  /** Size in bytes. */
  size: number;
  /** Last modification time. */
  modified: Date;
}

/** A byte range for {@link StorageDriver.read}: `offset` inclusive, `length` bytes. */
export interface ByteRange {
  /** First byte, 0-based. */
  offset: number;
  /** Number of bytes to read; to the end of the object when omitted. */
  length?: number;
}

/** Options for {@link StorageDriver.list}. */
export interface ListOptions {
  /** Only keys strictly greater than this one (lexical order) are returned. */
  after?: string;
  /** At most this many keys. */
  limit?: number;
  /**
   * Ask for {@link ListPage.info}: each key's size and modification time, from
   * drivers whose listing carries them at no extra cost (S3's ListObjectsV2
   * does). Callers that need them for many keys (garbage collection) save a
   * `stat` per key; a driver may ignore the flag.
   */
  info?: boolean;
}

/** One page of {@link StorageDriver.list}. */
export interface ListPage {
  /** Keys in lexical (code unit) order. */
  keys: string[];
  /**
   * True when more keys follow the last one returned. A full page may say so
   * when the next page turns out empty (S3, where only hidden part objects
   * follow, rather than pay a request to look); false always means the
   * listing is complete, and a page that is not full is never truncated.
   */
  truncated: boolean;
  /**
   * Only when {@link ListOptions.info} was asked for and the driver supports
   * it: `info[i]` is what `stat(keys[i])` answered at the time of the listing,
   * or `undefined` where the listing alone cannot tell (the caller stats that
   * key). Absent from drivers that do not support it.
   */
  info?: Array<ObjectInfo | undefined>;
}

/** A body a driver can store: bytes, or a stream that is consumed once. */
export type StorageBody = Uint8Array | ReadableStream<Uint8Array>;

/**
 * The contract every storage backend implements.
 *
 * Consistency rules every driver keeps:
 * - `write` is atomic: readers see the old object or the whole new one, never a
 *   part, and a failed or aborted write leaves the old object (or nothing).
 * - Concurrent `write`s to one key: one of them wins whole.
 * - `append` grows an object that is being assembled (an upload in progress);
 *   it is readable between appends. `move` makes it visible under its final key
 *   atomically.
 * - **One writer, a final move.** Appends to a key and a move of that key
 *   exclude each other, also across processes that share the store: while an
 *   append to `K` is in progress, another append to `K` or a `move(K, …)` fails
 *   with `conflict` (or waits for it) and changes nothing; an append that
 *   starts after a move of `K` began fails too (`conflict` when it expected a
 *   size, as the registry always does). So once `move` has resolved, no byte of
 *   any append ever reaches the moved object: it holds exactly the bytes `K`
 *   held when the move took effect, and exactly `expectedSize` of them when
 *   {@link MoveOptions.expectedSize} is given. This is what keeps a committed
 *   blob equal to the bytes whose digest was checked.
 */
export interface StorageDriver {
  /** A short name for logs and errors, e.g. `"memory"` or `"fs"`. */
  readonly name: string;

  /** Size and modification time, or `undefined` if there is no such object. */
  stat(key: string): Promise<ObjectInfo | undefined>;

  /**
   * Stream an object (or a range of it), or `undefined` if there is none.
   * A range past the end yields the bytes that exist (possibly none).
   */
  read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined>;

  /** Store a whole object atomically, replacing any old one. Resolves to its size. */
  write(key: string, body: StorageBody, options?: WriteOptions): Promise<number>;

  /**
   * Append bytes to an object, creating it when absent. When `expectedSize` is
   * given and the object's current size differs, nothing is written and a
   * {@link StorageError} with code `"conflict"` is thrown. Resolves to the new size.
   * A failed append may leave some bytes appended; callers track the size they
   * rely on themselves.
   */
  append(key: string, body: StorageBody, options?: AppendOptions): Promise<number>;

  /**
   * Atomically rename `from` to `to`, replacing `to`. Throws `"not_found"` when
   * `from` is missing, `"conflict"` when an append to `from` is in progress or
   * `from` does not have {@link MoveOptions.expectedSize} bytes.
   */
  move(from: string, to: string, options?: MoveOptions): Promise<void>;

  /** Delete an object; deleting a missing object is not an error. */
  delete(key: string): Promise<void>;

  /** Delete every object whose key starts with `prefix` + `/`. */
  deletePrefix(prefix: string): Promise<void>;

  /** List keys under a prefix (`prefix` + `/`, recursively), in lexical order, paged. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;

  /**
   * Optional capability: a time-limited URL from which any HTTP client can
   * `GET` exactly the bytes `key` holds now, without credentials, until the
   * URL expires. The registry answers a blob `GET` with a 307 to it, so the
   * bytes flow from the store to the client and not through the registry
   * (`storage.redirect` in Distribution). Resolves to `undefined` when the
   * driver cannot hand out a URL for this object (it is missing, or not stored
   * as one object, e.g. an upload still being assembled); the caller then
   * reads it as usual. Anyone holding the URL can read the object, so callers
   * hand it only to a client already authorized to read it. Drivers without
   * such URLs (memory, fs) leave this out. The S3 driver gives a SigV4
   * presigned GET URL.
   */
  redirectURL?(key: string, options?: RedirectOptions): Promise<string | undefined>;

  /** Release resources (file handles, sockets). Optional. */
  close?(): Promise<void>;
}

/** Options for {@link StorageDriver.redirectURL}. */
export interface RedirectOptions {
  /**
   * How long the URL stays valid, in seconds; default
   * {@link DEFAULT_REDIRECT_SECONDS}. A driver may cap it at what its store
   * allows (S3: 7 days).
   */
  expiresInSeconds?: number;
}

/** The default lifetime of a {@link StorageDriver.redirectURL}: 20 minutes, as Distribution's S3 driver. */
export const DEFAULT_REDIRECT_SECONDS = 1200;

/** Options for {@link StorageDriver.write}. */
export interface WriteOptions {
  /** Aborts the write; the old object stays. */
  signal?: AbortSignal;
}

/** Options for {@link StorageDriver.append}. */
export interface AppendOptions extends WriteOptions {
  /** The size the object must have before this append (optimistic concurrency). */
  expectedSize?: number;
  /**
   * Create the object when it is missing (default `true`). With `false`, an
   * append to a missing object fails with `"conflict"` and creates nothing:
   * the registry continues only an upload whose object exists, so a cancelled
   * upload cannot be brought back by a request that raced its cancel.
   */
  create?: boolean;
}

/** Options for {@link StorageDriver.move}. */
export interface MoveOptions {
  /**
   * The size `from` must have when the move takes effect; otherwise nothing is
   * moved and a {@link StorageError} with code `"conflict"` is thrown. The
   * registry passes the number of bytes whose digest it verified.
   */
  expectedSize?: number;
}

/**
 * Machine-readable reasons a driver fails.
 *
 * - `invalid_key`: the key is not valid (see {@link assertValidKey}).
 * - `invalid_range`: a read range (`offset`, `length`) or a move's
 *   `expectedSize` is not a non-negative safe integer.
 * - `not_found`: the object is missing where the operation needs it.
 * - `conflict`: another writer, a size mismatch, or a key that is both an object and a prefix.
 * - `aborted`: the caller's signal aborted the operation.
 * - `no_space`: the storage has no room for the bytes: the filesystem is full
 *   (`ENOSPC`), a disk quota is exhausted (`EDQUOT`), or the object would pass
 *   the largest file the filesystem or the process may write (`EFBIG`). The
 *   operation changed nothing, like any failed write; freeing space (or raising
 *   the limit) and retrying can succeed. The registry answers it with 507.
 * - `io`: any other failure of the backend.
 */
export type StorageErrorCode = "invalid_key" | "invalid_range" | "not_found" | "conflict" | "aborted" | "no_space" | "io";

/** The one error type drivers throw for expected failures. */
export class StorageError extends Error {
  /** Always `"StorageError"`. */
  override readonly name = "StorageError";
  constructor(
    /** Why the operation failed. */
    readonly code: StorageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const MAX_SEGMENT = 255;

/** Characters a key segment may hold: `A-Z a-z 0-9 . _ @ : + = -`. */
const ALLOWED = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._@:+=-") ALLOWED[c.charCodeAt(0)] = 1;
const SLASH = 0x2f;
const DOT = 0x2e;

/**
 * Reject keys that could escape a driver's root or confuse it: empty keys,
 * absolute paths, `.`/`..` segments, empty segments, NUL and other control
 * characters, backslashes, and anything outside a conservative character set.
 * A segment is at most 255 characters, the file-name limit of common
 * filesystems, so that every valid key can be stored by the fs driver.
 * Called by every driver method through {@link checked}; throws `invalid_key`.
 */
export function assertValidKey(key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > 1024) {
    throw new StorageError("invalid_key", "storage key must be 1 to 1024 characters");
  }
  if (!isValidKey(key)) throw new StorageError("invalid_key", "storage key has an invalid segment");
}

/** Whether `key` passes {@link assertValidKey}. */
export function isValidKey(key: string): boolean {
  if (typeof key !== "string" || key.length === 0 || key.length > 1024) return false;
  // One pass over the characters (this runs on every storage call): each
  // segment is 1..255 allowed characters and neither "." nor "..".
  let start = 0;
  for (let i = 0; i <= key.length; i++) {
    const c = i === key.length ? SLASH : key.charCodeAt(i);
    if (c !== SLASH) {
      if (c >= 128 || ALLOWED[c] !== 1) return false;
      continue;
    }
    const length = i - start;
    if (length === 0 || length > MAX_SEGMENT) return false;
    if (key.charCodeAt(start) === DOT && (length === 1 || (length === 2 && key.charCodeAt(start + 1) === DOT))) return false;
    start = i + 1;
  }
  return true;
}

/**
 * Wrap a driver so that every key is validated before the driver sees it.
 * The registry and the user store always talk to drivers through this.
 */
export function checked(driver: StorageDriver): StorageDriver {
  if ((driver as { [CHECKED]?: true })[CHECKED]) return driver;
  // async arrows: an invalid key rejects the promise rather than throwing synchronously
  const wrapped: StorageDriver & { [CHECKED]: true } = {
    [CHECKED]: true,
    name: driver.name,
    // Not async: stat runs twice per manifest GET, and an async arrow returning the driver's promise costs extra turns.
    stat: (key) => {
      try {
        assertValidKey(key);
        return Promise.resolve(driver.stat(key));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    read: async (key, range) => {
      assertValidKey(key);
      if (range && (!Number.isSafeInteger(range.offset) || range.offset < 0 ||
        (range.length !== undefined && (!Number.isSafeInteger(range.length) || range.length < 0)))) {
        throw new StorageError("invalid_range", "invalid byte range");
      }
      return driver.read(key, range);
    },
    write: async (key, body, options) => (assertValidKey(key), driver.write(key, body, options)),
    append: async (key, body, options) => (assertValidKey(key), driver.append(key, body, options)),
    move: async (from, to, options) => {
      assertValidKey(from);
      assertValidKey(to);
      if (options?.expectedSize !== undefined && (!Number.isSafeInteger(options.expectedSize) || options.expectedSize < 0)) {
        throw new StorageError("invalid_range", "invalid expected size");
      }
      return driver.move(from, to, options);
    },
    delete: async (key) => (assertValidKey(key), driver.delete(key)),
    deletePrefix: async (prefix) => (assertValidKey(prefix), driver.deletePrefix(prefix)),
    list: async (prefix, options) => (assertValidKey(prefix), driver.list(prefix, options)),
    close: async () => driver.close?.(),
  };
  const redirect = driver.redirectURL?.bind(driver);
  if (redirect) {
    wrapped.redirectURL = async (key, options) => {
      assertValidKey(key);
      const seconds = options?.expiresInSeconds;
      if (seconds !== undefined && (!Number.isSafeInteger(seconds) || seconds < 1)) {
        throw new StorageError("invalid_range", "redirect lifetime must be a positive whole number of seconds");
      }
      return redirect(key, options);
    };
  }
  return wrapped;
}

const CHECKED = Symbol("registry-kit.checked");
