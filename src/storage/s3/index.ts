/**
 * A storage driver on an S3-compatible object store (AWS S3, Ceph radosgw,
 * MinIO, ...), speaking the S3 REST API over `fetch` with SigV4 signing by
 * `aws4fetch`. Runtime-neutral: `fetch`, WebCrypto and web streams only.
 *
 * How the contract maps onto S3 (see docs/storage-s3.md):
 * - `write` (`write.ts`): one PUT for bodies up to `partSize`, a multipart
 *   upload beyond (`multipart.ts`). Parts are buffered, so memory per write is
 *   bounded by `partSize × (concurrency + 1)`, and all writes and appends of
 *   the driver together by `maxBufferedBytes` (`budget.ts`).
 * - `append` (`append.ts`): every piece of `partSize` an append receives is a *part object*
 *   `<key>!<offset>` (offset zero-padded to 16 digits, `keys.ts`), created with
 *   `If-None-Match: *` so that two racing appends at one offset cannot both
 *   succeed. The object is the concatenation of its part objects; `!` sorts
 *   below every character a key may hold, so part objects list right after
 *   their key and never match another key's prefix.
 * - `move` (`move.ts`) of an appended object assembles the parts server-side
 *   into the final key (multipart upload with UploadPartCopy; runs of parts
 *   under 5 MiB are merged by streaming them into one part), then deletes them.
 * - A plain object at `<key>` wins over part objects of the same key
 *   (`parts.ts`, `read.ts`).
 * - One writer, a final move: `append` and `move` of a key hold its writer-lock
 *   object `<key>!writer` (see `writer-lock.ts`), so they exclude each other
 *   across processes; `move` checks `expectedSize` and assembles, under the
 *   lock, exactly the part objects it listed (pinned by their ETags).
 *
 * - `redirectURL` (`redirect.ts`): a SigV4 presigned GET URL of a plain
 *   object (20 minutes by default), for `storage.redirect`.
 *
 * This file reads the options and composes the driver from those modules,
 * each a set of functions over one `S3Context`.
 *
 * @module
 */
import type { StorageDriver } from "../driver.js";
import { append } from "./append.js";
import { BufferBudget } from "./budget.js";
import { S3Client } from "./client.js";
import type { S3Context } from "./context.js";
import { deleteObject, deletePrefix } from "./delete.js";
import { KeyLayout } from "./keys.js";
import { list } from "./list.js";
import { move } from "./move.js";
import { MAX_PART, MIN_PART } from "./multipart.js";
import { read, stat } from "./read.js";
import { RecentAppends } from "./recent-appends.js";
import { redirectURL } from "./redirect.js";
import { write } from "./write.js";

/** Options of {@link s3Storage}. */
export interface S3StorageOptions {
  /** The bucket; it must exist. */
  bucket: string;
  /** Signing region; default `AWS_REGION`, `AWS_DEFAULT_REGION` or `us-east-1`. */
  region?: string;
  /** Service URL, e.g. `http://127.0.0.1:7480`; default `S3_ENDPOINT`, `AWS_ENDPOINT_URL_S3`, or AWS S3 in the region. */
  endpoint?: string;
  /** Address the bucket in the path (`/bucket/key`) rather than the host name. Default: true when an endpoint is given, false for AWS. */
  forcePathStyle?: boolean;
  /** Default `AWS_ACCESS_KEY_ID`. */
  accessKeyId?: string;
  /** Default `AWS_SECRET_ACCESS_KEY`. */
  secretAccessKey?: string;
  /** Default `AWS_SESSION_TOKEN`. */
  sessionToken?: string;
  /** Prefix for every key in the bucket, e.g. `"registry"`. */
  rootDirectory?: string;
  /** Multipart part size in bytes; default 8 MiB, at least 5 MiB, at most 5 GiB. */
  partSize?: number;
  /** Parts uploaded in parallel by one write or append; default 2. A write or append buffers at most `partSize × (concurrency + 1)` bytes. */
  concurrency?: number;
  /** Parts copied server-side (`UploadPartCopy`, or small parts merged) in parallel by one move; default 8. Costs no part buffers. */
  copyConcurrency?: number;
  /**
   * The most bytes of part buffers all writes and appends of this driver hold
   * together; default 24 MiB (three 8 MiB parts, what one write or append uses). A write beyond it waits for a
   * buffer, and every write gets at least one, so it bounds memory, not progress.
   */
  maxBufferedBytes?: number;
  /** Retries of a failed idempotent request (5xx, 429, network errors); default 5. */
  maxRetries?: number;
  /** Base delay of the exponential backoff in ms; default 100. */
  retryBaseMs?: number;
  /** Sign payload hashes (SHA-256 of each body) instead of `UNSIGNED-PAYLOAD`; default false. */
  signPayload?: boolean;
  /** Allow a plain `http:` endpoint that is not on loopback; default false. */
  allowHttp?: boolean;
  /** The fetch to use (for tests, proxies or fault injection); default `globalThis.fetch`. */
  fetch?: typeof fetch;
}

/** Create an S3 storage driver. The bucket must exist. */
export function s3Storage(options: S3StorageOptions): StorageDriver {
  const ctx = createContext(options);
  return {
    name: "s3",
    stat: (key) => stat(ctx, key),
    read: (key, range) => read(ctx, key, range),
    write: (key, body, writeOptions) => write(ctx, key, body, writeOptions),
    append: (key, body, appendOptions) => append(ctx, key, body, appendOptions),
    move: (from, to, moveOptions) => move(ctx, from, to, moveOptions),
    delete: (key) => deleteObject(ctx, key),
    deletePrefix: (prefix) => deletePrefix(ctx, prefix),
    list: (prefix, listOptions) => list(ctx, prefix, listOptions),
    redirectURL: (key, redirectOptions) => redirectURL(ctx, key, redirectOptions),
    async close(): Promise<void> {},
  };
}

/** Check the options, fill in defaults from the environment, and build the driver's state. */
function createContext(options: S3StorageOptions): S3Context {
  const env = readEnv();
  const region = options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
  const accessKeyId = options.accessKeyId ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = options.secretAccessKey ?? env.AWS_SECRET_ACCESS_KEY;
  const sessionToken = options.sessionToken ?? (options.accessKeyId === undefined ? env.AWS_SESSION_TOKEN : undefined);
  if (!options.bucket) throw new TypeError("s3Storage: bucket is required");
  if (!accessKeyId || !secretAccessKey) {
    throw new TypeError("s3Storage: credentials are required (accessKeyId/secretAccessKey or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)");
  }
  const endpointText = options.endpoint ?? env.S3_ENDPOINT ?? env.AWS_ENDPOINT_URL_S3;
  let endpoint: URL;
  try {
    endpoint = new URL(endpointText ?? `https://s3.${region}.amazonaws.com`);
  } catch {
    throw new TypeError("s3Storage: endpoint is not a valid URL");
  }
  if (endpoint.protocol !== "https:" && endpoint.protocol !== "http:") throw new TypeError("s3Storage: endpoint must be http: or https:");
  if (endpoint.protocol === "http:" && !options.allowHttp && !isLoopback(endpoint.hostname)) {
    throw new TypeError("s3Storage: plain http is only allowed on loopback; use https or set allowHttp");
  }
  const partSize = options.partSize ?? 8 * 1024 * 1024;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART || partSize > MAX_PART) {
    throw new TypeError("s3Storage: partSize must be an integer from 5 MiB to 5 GiB");
  }
  const concurrency = options.concurrency ?? 2;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError("s3Storage: concurrency must be a positive integer");
  const copyConcurrency = options.copyConcurrency ?? 8;
  if (!Number.isSafeInteger(copyConcurrency) || copyConcurrency < 1) throw new TypeError("s3Storage: copyConcurrency must be a positive integer");
  const maxBuffered = options.maxBufferedBytes ?? 24 * 1024 * 1024;
  if (!Number.isSafeInteger(maxBuffered) || maxBuffered < 1) throw new TypeError("s3Storage: maxBufferedBytes must be a positive integer");
  const root = (options.rootDirectory ?? "").replace(/^\/+|\/+$/g, "");
  if (root && !/^[A-Za-z0-9._@:+=/-]+$/.test(root)) throw new TypeError("s3Storage: rootDirectory has invalid characters");
  const signPayload = options.signPayload ?? false;
  const maxRetries = options.maxRetries ?? 5;

  const client = new S3Client({
    bucket: options.bucket,
    region,
    endpoint,
    forcePathStyle: options.forcePathStyle ?? endpointText !== undefined,
    accessKeyId,
    secretAccessKey,
    sessionToken,
    maxRetries,
    retryBaseMs: options.retryBaseMs ?? 100,
    signPayload,
    fetch: options.fetch ?? globalThis.fetch,
  });
  const budget = new BufferBudget(Math.floor(maxBuffered / partSize));
  return { client, keys: new KeyLayout(root), partSize, concurrency, copyConcurrency, signPayload, maxRetries, budget, appended: new RecentAppends() };
}

function readEnv(): Record<string, string | undefined> {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env ?? {};
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
