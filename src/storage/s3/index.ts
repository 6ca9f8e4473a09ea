/**
 * A storage driver on an S3-compatible object store (AWS S3, Ceph radosgw,
 * MinIO, ...), speaking the S3 REST API over `fetch` with SigV4 signing by
 * `aws4fetch`. Runtime-neutral: `fetch`, WebCrypto and web streams only.
 *
 * How the contract maps onto S3 (see docs/storage-s3.md):
 * - `write`: one PUT for bodies up to `partSize`, a multipart upload beyond.
 *   Parts are buffered, so memory per write is bounded by
 *   `partSize × (concurrency + 1)`.
 * - `append`: every append is its own *part object* `<key>!<offset>` (offset
 *   zero-padded to 16 digits), created with `If-None-Match: *` so that two
 *   racing appends at one offset cannot both succeed. The object is the
 *   concatenation of its part objects; `!` sorts below every character a key
 *   may hold, so part objects list right after their key and never match
 *   another key's prefix.
 * - `move` of an appended object assembles the parts server-side into the
 *   final key (multipart upload with UploadPartCopy; runs of parts under
 *   5 MiB are merged by streaming them into one part), then deletes them.
 * - A plain object at `<key>` wins over part objects of the same key.
 * - One writer, a final move: `append` and `move` of a key hold its writer-lock
 *   object `<key>!writer` (see `writer-lock.ts`), so they exclude each other
 *   across processes; `move` checks `expectedSize` and assembles, under the
 *   lock, exactly the part objects it listed (pinned by their ETags).
 *
 * @module
 */
import { md5 } from "@noble/hashes/legacy.js";
import { StorageError, type AppendOptions, type ByteRange, type ListOptions, type ListPage, type MoveOptions, type ObjectInfo, type StorageBody, type StorageDriver, type WriteOptions } from "../driver.js";
import { concatStreams, emptyStream, PieceReader, pieceBody, type Piece } from "./body.js";
import { S3Client, type ReplayableBody } from "./client.js";
import { acquireWriter, isWriterLock, WRITER_SUFFIX, type WriterLock } from "./writer-lock.js";
import { children, childText, escapeXml } from "./xml.js";

export { XmlError, parseXml, decodeEntities, escapeXml } from "./xml.js";
export type { XmlElement } from "./xml.js";

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
  /** Parts uploaded or copied in parallel by one write or move; default 2. A write buffers at most `partSize × (concurrency + 1)` bytes. */
  concurrency?: number;
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

const MiB = 1024 * 1024;
const MIN_PART = 5 * MiB;
const MAX_PART = 5 * 1024 * MiB;
const MAX_COPY = 5 * 1024 * MiB;
const MAX_PARTS = 10_000;
const PART_MARK = "!";
const OFFSET_DIGITS = 16;
const DELETE_BATCH = 1000;

/** One entry of a ListObjectsV2 page. */
interface RawEntry {
  key: string;
  size: number;
  modified: Date;
  /** Without quotes; empty when the server sent none. */
  etag: string;
}

/** A part object of an appended object. */
interface PartObject {
  key: string;
  offset: number;
  size: number;
  modified: Date;
  etag: string;
}

/** What is stored under one key: a plain object and/or the part objects of an append. */
interface Stored {
  plain?: RawEntry | undefined;
  /** Contiguous part objects from offset 0, in order. */
  parts: PartObject[];
  /** Every part object found, contiguous or not. */
  allParts: PartObject[];
  partsSize: number;
  /** The writer-lock object, if there is one. */
  lock?: RawEntry | undefined;
}

/** Create an S3 storage driver. The bucket must exist. */
export function s3Storage(options: S3StorageOptions): StorageDriver {
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
  const partSize = options.partSize ?? 8 * MiB;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART || partSize > MAX_PART) {
    throw new TypeError("s3Storage: partSize must be an integer from 5 MiB to 5 GiB");
  }
  const concurrency = options.concurrency ?? 2;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError("s3Storage: concurrency must be a positive integer");
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

  const rootPrefix = root ? root + "/" : "";
  const objectKey = (key: string): string => rootPrefix + key;
  const partKey = (key: string, offset: number): string => objectKey(key) + PART_MARK + String(offset).padStart(OFFSET_DIGITS, "0");
  const firstPart = "0".repeat(OFFSET_DIGITS);
  /**
   * The driver key that a listed bucket key shows to exist: a plain object, or
   * the first part object of an appended one, as `stat` sees it.
   * Further part objects and writer locks show nothing.
   */
  const listedKey = (raw: string): string | undefined => {
    const k = raw.slice(rootPrefix.length);
    const mark = k.indexOf(PART_MARK);
    if (mark === -1) return k;
    return k.slice(mark + 1) === firstPart ? k.slice(0, mark) : undefined;
  };

  // ---- listing -------------------------------------------------------------

  async function listPage(prefix: string, opts: { startAfter?: string | undefined; token?: string | undefined; maxKeys?: number }): Promise<{ entries: RawEntry[]; next?: string | undefined }> {
    const root = await client.sendXml({
      op: "list",
      method: "GET",
      query: {
        "list-type": 2,
        prefix,
        "max-keys": opts.maxKeys ?? 1000,
        "start-after": opts.token ? undefined : opts.startAfter,
        "continuation-token": opts.token,
      },
    });
    const entries = children(root, "Contents").map((c) => ({
      key: childText(c, "Key") ?? "",
      size: Number(childText(c, "Size") ?? "0"),
      modified: new Date(childText(c, "LastModified") ?? 0),
      etag: (childText(c, "ETag") ?? "").replace(/"/g, ""),
    }));
    const truncated = childText(root, "IsTruncated") === "true";
    const next = childText(root, "NextContinuationToken");
    if (truncated && !next) throw new StorageError("io", "s3 list: truncated answer without a continuation token");
    return { entries, next: truncated ? next : undefined };
  }

  async function* listAll(prefix: string, startAfter?: string, maxKeys?: number): AsyncGenerator<RawEntry> {
    let token: string | undefined;
    do {
      const page = await listPage(prefix, { startAfter, token, ...(maxKeys ? { maxKeys } : {}) });
      yield* page.entries;
      token = page.next;
    } while (token);
  }

  /** The plain object, part objects and writer lock stored for a key, in one listing (they sort first under the key). */
  async function inspect(key: string): Promise<Stored> {
    const base = objectKey(key);
    let plain: RawEntry | undefined;
    let lock: RawEntry | undefined;
    const allParts: PartObject[] = [];
    for await (const entry of listAll(base, undefined, 100)) {
      if (entry.key === base) plain = entry;
      else if (entry.key.startsWith(base + PART_MARK)) {
        const offset = partOffset(entry.key.slice(base.length + 1));
        if (offset !== undefined) allParts.push({ ...entry, offset });
        else if (entry.key === base + WRITER_SUFFIX) lock = entry;
      } else break;
    }
    return { plain, ...contiguous(allParts), allParts, lock };
  }

  async function listParts(key: string): Promise<{ parts: PartObject[]; partsSize: number; allParts: PartObject[] }> {
    const prefix = objectKey(key) + PART_MARK;
    const allParts: PartObject[] = [];
    for await (const entry of listAll(prefix)) {
      const offset = partOffset(entry.key.slice(prefix.length));
      if (offset !== undefined) allParts.push({ ...entry, offset });
    }
    return { ...contiguous(allParts), allParts };
  }

  // ---- deleting ------------------------------------------------------------

  async function deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      if (batch.length === 1) {
        await client.send({ op: "delete", method: "DELETE", key: batch[0]!, accept: [404] });
        continue;
      }
      const xml = `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${batch.map((k) => `<Object><Key>${escapeXml(k)}</Key></Object>`).join("")}</Delete>`;
      const bytes = new TextEncoder().encode(xml);
      const result = await client.sendXml({
        op: "delete",
        method: "POST",
        query: { delete: "" },
        headers: { "content-md5": base64(md5(bytes)), "content-type": "application/xml" },
        body: bytes,
      });
      const failed = children(result, "Error").filter((e) => childText(e, "Code") !== "NoSuchKey");
      if (failed.length > 0) {
        const first = failed[0]!;
        throw new StorageError("io", `s3 delete: ${failed.length} objects not deleted (${childText(first, "Code")} on ${JSON.stringify(childText(first, "Key"))})`);
      }
    }
  }

  /** Delete the part objects of `key`; with `lock`, its writer lock too (and anything else under `<key>!`). */
  async function deleteParts(key: string, lock = false): Promise<void> {
    const prefix = objectKey(key) + PART_MARK;
    const keys: string[] = [];
    for await (const entry of listAll(prefix)) {
      if (lock || partOffset(entry.key.slice(prefix.length)) !== undefined) keys.push(entry.key);
    }
    if (keys.length > 0) await deleteKeys(keys);
  }

  // ---- writing -------------------------------------------------------------

  async function putObject(rawKey: string, piece: Piece, headers: Record<string, string>, signal: AbortSignal | undefined, op: string, accept?: number[]): Promise<Response> {
    return client.send({ op, method: "PUT", key: rawKey, body: pieceBody(piece, signPayload), headers, signal, ...(accept ? { accept } : {}) });
  }

  /** Upload the rest of a body as a multipart upload, starting with `first`. */
  async function multipartWrite(rawKey: string, first: Piece, reader: PieceReader, signal: AbortSignal | undefined): Promise<number> {
    const uploadId = await createMultipart(rawKey, signal);
    try {
      const etags: string[] = [];
      const inFlight = new Set<Promise<void>>();
      let failure: unknown;
      let total = 0;
      let partNumber = 0;
      for (let piece: Piece | undefined = first; piece && piece.length > 0; piece = await reader.next()) {
        const number = ++partNumber;
        if (number > MAX_PARTS) throw new StorageError("io", `s3 write: more than ${MAX_PARTS} parts; raise partSize`);
        total += piece.length;
        const current = piece;
        const task = client
          .send({ op: "write", method: "PUT", key: rawKey, query: { partNumber: number, uploadId }, body: pieceBody(current, signPayload), signal })
          .then((response) => {
            etags[number - 1] = response.headers.get("etag") ?? "";
            void response.body?.cancel();
          })
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => current.release());
        const tracked: Promise<void> = task.finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        if (failure) break;
      }
      await Promise.all(inFlight);
      if (failure) throw failure;
      await completeMultipart(rawKey, uploadId, etags, signal);
      return total;
    } catch (error) {
      await reader.cancel(error);
      await abortMultipart(rawKey, uploadId);
      throw error;
    }
  }

  async function createMultipart(rawKey: string, signal?: AbortSignal): Promise<string> {
    const created = await client.sendXml({ op: "write", method: "POST", key: rawKey, query: { uploads: "" }, signal });
    const uploadId = childText(created, "UploadId");
    if (!uploadId) throw new StorageError("io", "s3 write: no UploadId in the answer to CreateMultipartUpload");
    return uploadId;
  }

  async function completeMultipart(rawKey: string, uploadId: string, etags: string[], signal?: AbortSignal): Promise<void> {
    const xml = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join("")}</CompleteMultipartUpload>`;
    await client.sendXml({ op: "write", method: "POST", key: rawKey, query: { uploadId }, body: xml, headers: { "content-type": "application/xml" }, signal });
  }

  async function abortMultipart(rawKey: string, uploadId: string): Promise<void> {
    await client.send({ op: "abort", method: "DELETE", key: rawKey, query: { uploadId }, accept: [404] }).then(
      (r) => r.body?.cancel(),
      () => {}, // best effort: a bucket lifecycle rule should clean up what is left
    );
  }

  /** Copy `sourceKey` (raw) of `size` bytes to `rawKey` server-side; only the version with `etag`, when given. */
  async function copyObject(sourceKey: string, size: number, rawKey: string, etag?: string): Promise<void> {
    if (size <= MAX_COPY) {
      await client.sendXml({ op: "move", method: "PUT", key: rawKey, headers: copySourceHeaders(sourceKey, etag) });
      return;
    }
    const tasks: AssemblyTask[] = [];
    for (let offset = 0; offset < size; offset += partSize) {
      tasks.push({ kind: "copy", source: sourceKey, etag, range: [offset, Math.min(size, offset + partSize) - 1] });
    }
    await assemble(rawKey, tasks);
  }

  /** `x-amz-copy-source`, pinned to one version of the source by `x-amz-copy-source-if-match` (radosgw 16 ignores that; AWS and MinIO honour it). */
  function copySourceHeaders(sourceKey: string, etag: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { "x-amz-copy-source": client.copySource(sourceKey) };
    if (etag) headers["x-amz-copy-source-if-match"] = `"${etag}"`;
    return headers;
  }

  type AssemblyTask =
    | { kind: "copy"; source: string; etag?: string | undefined; range?: [number, number] }
    | { kind: "merge"; sources: PartObject[]; length: number };

  /** Build `rawKey` from tasks as one multipart upload, `concurrency` parts at a time. */
  async function assemble(rawKey: string, tasks: AssemblyTask[]): Promise<void> {
    if (tasks.length > MAX_PARTS) throw new StorageError("io", `s3 move: more than ${MAX_PARTS} parts`);
    const uploadId = await createMultipart(rawKey);
    try {
      const etags: string[] = new Array(tasks.length);
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let i = next++; i < tasks.length; i = next++) {
          const task = tasks[i]!;
          const query = { partNumber: i + 1, uploadId };
          if (task.kind === "copy") {
            const headers = copySourceHeaders(task.source, task.etag);
            if (task.range) headers["x-amz-copy-source-range"] = `bytes=${task.range[0]}-${task.range[1]}`;
            const result = await client.sendXml({ op: "move", method: "PUT", key: rawKey, query, headers });
            etags[i] = childText(result, "ETag") ?? "";
          } else {
            const response = await client.send({ op: "move", method: "PUT", key: rawKey, query, body: mergedBody(task.sources, task.length) });
            etags[i] = response.headers.get("etag") ?? "";
            void response.body?.cancel();
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
      await completeMultipart(rawKey, uploadId, etags);
    } catch (error) {
      await abortMultipart(rawKey, uploadId);
      throw error;
    }
  }

  /** A body streaming part objects one after the other (reopened on retry), each only in the version listed. */
  function mergedBody(sources: PartObject[], length: number): ReplayableBody {
    return { length, open: () => concatStreams(sources.map((p) => () => getStream(p.key, "move", undefined, p.etag))) };
  }

  async function getStream(rawKey: string, op: string, range?: [number, number], etag?: string): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = range ? { range: `bytes=${range[0]}-${range[1]}` } : {};
    if (etag) headers["if-match"] = `"${etag}"`;
    const response = await client.send({ op, method: "GET", key: rawKey, headers, accept: [404] });
    if (response.status === 404) {
      await response.body?.cancel();
      throw new StorageError("io", `s3 ${op}: an appended part vanished while being read (concurrent move or delete)`);
    }
    return resumable(response, rawKey, op, range ? range[0] : 0, range ? range[1] + 1 : undefined);
  }

  /**
   * The body of a GET that, when the connection fails mid-way, continues with a
   * ranged GET from the first byte not yet delivered (`If-Match` the same ETag,
   * so a replaced object fails rather than mixing), up to `maxRetries` times.
   */
  function resumable(response: Response, rawKey: string, op: string, start: number, end: number | undefined): ReadableStream<Uint8Array> {
    const etag = response.headers.get("etag");
    let reader = (response.body ?? emptyStream()).getReader();
    let position = start;
    let resumes = 0;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          try {
            const { done, value } = await reader.read();
            if (done) return controller.close();
            position += value.byteLength;
            return controller.enqueue(value);
          } catch (error) {
            if (!etag || resumes >= maxRetries || (end !== undefined && position >= end)) {
              throw new StorageError("io", `s3 ${op} ${JSON.stringify(rawKey)}: the connection failed while reading`, { cause: error });
            }
            resumes++;
            const again = await client.send({
              op,
              method: "GET",
              key: rawKey,
              headers: { range: `bytes=${position}-${end === undefined ? "" : end - 1}`, "if-match": etag },
              accept: [412],
            });
            if (again.status === 412) {
              await again.body?.cancel();
              throw new StorageError("io", `s3 ${op} ${JSON.stringify(rawKey)}: the object changed while being read`, { cause: error });
            }
            reader = (again.body ?? emptyStream()).getReader();
          }
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => {});
      },
    }, { highWaterMark: 0 });
  }

  /** Plan the parts of an assembled object: big part objects are copied, runs of small ones merged. */
  function planAssembly(parts: PartObject[]): AssemblyTask[] {
    const tasks: AssemblyTask[] = [];
    let run: PartObject[] = [];
    let runLength = 0;
    for (const part of parts) {
      if (run.length === 0 && part.size >= MIN_PART) {
        tasks.push({ kind: "copy", source: part.key, etag: part.etag });
        continue;
      }
      run.push(part);
      runLength += part.size;
      if (runLength >= MIN_PART) {
        tasks.push({ kind: "merge", sources: run, length: runLength });
        run = [];
        runLength = 0;
      }
    }
    if (run.length > 0) tasks.push({ kind: "merge", sources: run, length: runLength });
    return tasks;
  }

  /** Write one piece as the part object at `offset`, unless one is there already. */
  async function claimPart(key: string, offset: number, piece: Piece, signal: AbortSignal | undefined): Promise<boolean> {
    const rawKey = partKey(key, offset);
    const response = await putObject(rawKey, piece, { "if-none-match": "*" }, signal, "append", [412]);
    void response.body?.cancel();
    if (response.status !== 412) {
      piece.release();
      return true;
    }
    // A retried PUT may have succeeded before: then the part holds our bytes.
    const head = await client.send({ op: "append", method: "HEAD", key: rawKey, accept: [404] });
    const etag = head.headers.get("etag")?.replace(/"/g, "");
    if (head.status === 200 && Number(head.headers.get("content-length")) === piece.length && etag && !etag.includes("-")) {
      const digest = md5.create();
      for (const chunk of piece.chunks) digest.update(chunk);
      if (toHexString(digest.digest()) === etag) {
        piece.release();
        return true;
      }
    }
    return false;
  }

  // ---- the driver ----------------------------------------------------------

  const driver: StorageDriver = {
    name: "s3",

    async stat(key: string): Promise<ObjectInfo | undefined> {
      const head = await client.send({ op: "stat", method: "HEAD", key: objectKey(key), accept: [404] });
      if (head.status === 200) {
        return { size: Number(head.headers.get("content-length") ?? "0"), modified: new Date(head.headers.get("last-modified") ?? 0) };
      }
      const { parts, partsSize } = await listParts(key);
      if (parts.length === 0) return undefined;
      return { size: partsSize, modified: new Date(Math.max(...parts.map((p) => p.modified.getTime()))) };
    },

    async read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
      const offset = range?.offset ?? 0;
      const length = range?.length;
      const headers: Record<string, string> = {};
      if (length === 0) {
        return (await driver.stat(key)) ? emptyStream() : undefined;
      }
      if (offset > 0 || length !== undefined) headers.range = `bytes=${offset}-${length === undefined ? "" : offset + length - 1}`;
      const response = await client.send({ op: "read", method: "GET", key: objectKey(key), headers, accept: [404, 416] });
      if (response.status === 200 || response.status === 206) {
        return resumable(response, objectKey(key), "read", offset, length === undefined ? undefined : offset + length);
      }
      await response.body?.cancel();
      if (response.status === 416) return emptyStream();
      // Not a plain object: maybe an appended one.
      const { parts } = await listParts(key);
      if (parts.length === 0) return undefined;
      const end = length === undefined ? Infinity : offset + length;
      const sources: Array<() => Promise<ReadableStream<Uint8Array>>> = [];
      for (const part of parts) {
        const from = Math.max(offset, part.offset);
        const to = Math.min(end, part.offset + part.size);
        if (to <= from) continue;
        const whole = from === part.offset && to === part.offset + part.size;
        sources.push(() => getStream(part.key, "read", whole ? undefined : [from - part.offset, to - part.offset - 1]));
      }
      return concatStreams(sources);
    },

    async write(key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
      const signal = options?.signal;
      const rawKey = objectKey(key);
      const reader = new PieceReader(body, partSize, signal, concurrency + 1);
      let size: number;
      try {
        const first = (await reader.next())!;
        if (first.length < partSize || (await reader.atEnd())) {
          const response = await putObject(rawKey, first, {}, signal, "write").finally(() => first.release());
          void response.body?.cancel();
          size = first.length;
        } else {
          size = await multipartWrite(rawKey, first, reader, signal);
        }
      } catch (error) {
        await reader.cancel(error);
        throw error;
      }
      // Part objects of an earlier append under this key are now stale.
      await deleteParts(key);
      return size;
    },

    async append(key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
      const signal = options?.signal;
      const expected = options?.expectedSize;
      const reader = new PieceReader(body, partSize, signal, 1);
      let lock: WriterLock | undefined;
      try {
        // The lock comes first, before any byte of the body: a body held open holds off moves.
        lock = await acquireWriter(client, objectKey(key), "append", { wait: expected === undefined, signal });
        const stored = await inspect(key);
        const exists = stored.plain !== undefined || stored.parts.length > 0;
        if (!exists && options?.create === false) throw new StorageError("conflict", "the object does not exist");
        const size = stored.plain ? stored.plain.size : stored.partsSize;
        if (expected !== undefined && size !== expected) {
          throw new StorageError("conflict", `object size is ${size}, expected ${expected}`);
        }
        let piece = (await reader.next())!;
        if (piece.length === 0) {
          if (exists) return size;
          // Create an empty object (a plain one: the next append turns it into parts).
          const created = await putObject(objectKey(key), piece, { "if-none-match": "*" }, signal, "append", [412]);
          void created.body?.cancel();
          return 0;
        }
        const claimed: string[] = [];
        if (stored.plain && stored.plain.size > 0) {
          // Appending to a written object: its bytes become the part at offset 0.
          await client.sendXml({ op: "append", method: "PUT", key: partKey(key, 0), headers: copySourceHeaders(stored.plain.key, stored.plain.etag), signal });
          claimed.push(partKey(key, 0));
        }
        let total = size;
        for (; piece && piece.length > 0; piece = (await reader.next())!) {
          // We are the one writer, so only a leftover (a part beyond a gap) can be in the way.
          if (!(await claimPart(key, total, piece, signal))) {
            throw new StorageError("conflict", `a part object is in the way at offset ${total}`);
          }
          claimed.push(partKey(key, total));
          total += piece.length;
        }
        // Did a delete take the object (and our lock) meanwhile? Then take our parts back
        // rather than bring the object back. `delete` removes the lock first and lists
        // the parts last, so parts claimed before a check that passed are removed by it.
        const after = await inspect(key);
        if (after.lock?.etag !== lock.etag || after.partsSize !== total || (stored.plain && !after.plain)) {
          await deleteKeys(claimed);
          throw new StorageError("conflict", "the object was deleted or changed while this append was in progress");
        }
        if (stored.plain) await client.send({ op: "append", method: "DELETE", key: stored.plain.key, accept: [404] });
        return total;
      } catch (error) {
        await reader.cancel(error);
        throw error;
      } finally {
        await lock?.release();
      }
    },

    async move(from: string, to: string, options?: MoveOptions): Promise<void> {
      const expected = options?.expectedSize;
      const lock = await acquireWriter(client, objectKey(from), "move");
      let published = false;
      try {
        // Under the lock nothing is appended: these are the bytes the move publishes.
        const stored = await inspect(from);
        if (!stored.plain && stored.parts.length === 0) throw new StorageError("not_found", "no object to move");
        const size = stored.plain ? stored.plain.size : stored.partsSize;
        if (expected !== undefined && size !== expected) {
          throw new StorageError("conflict", `object size is ${size}, expected ${expected}`);
        }
        if (stored.plain) {
          if (from === to) return;
          await copyObject(stored.plain.key, stored.plain.size, objectKey(to), stored.plain.etag);
        } else {
          const tasks = planAssembly(stored.parts);
          const first = tasks[0]!;
          if (tasks.length === 1 && first.kind === "copy") {
            await copyObject(first.source, stored.parts[0]!.size, objectKey(to), first.etag);
          } else if (tasks.length === 1 && first.kind === "merge") {
            const response = await client.send({ op: "move", method: "PUT", key: objectKey(to), body: mergedBody(first.sources, first.length) });
            void response.body?.cancel();
          } else {
            await assemble(objectKey(to), tasks);
          }
        }
        published = true;
        if (from !== to) await deleteParts(to);
        const leftovers = stored.allParts.map((p) => p.key);
        if (stored.plain) leftovers.push(stored.plain.key);
        await deleteKeys(leftovers);
        published = false;
      } finally {
        // A source that could not be removed after publishing keeps its lock, so
        // that nothing appends to it; deleting the key clears both.
        if (!published) await lock.release();
      }
    },

    async delete(key: string): Promise<void> {
      // The lock first and the part objects last: an append in progress then either
      // finds its lock or the object gone when it checks (and takes its parts back), or
      // claimed its parts before the listing here (see append).
      for (const rawKey of [objectKey(key) + WRITER_SUFFIX, objectKey(key)]) {
        const response = await client.send({ op: "delete", method: "DELETE", key: rawKey, accept: [404] });
        void response.body?.cancel();
      }
      await deleteParts(key, true);
    },

    async deletePrefix(prefix: string): Promise<void> {
      // With writer locks among the objects, appends were (or seemed) in progress: once
      // the locks are gone, list again for parts claimed before those appends checked
      // their lock (see append).
      for (let pass = 0; pass < 2; pass++) {
        let locks = 0;
        const batch: string[] = [];
        for await (const entry of listAll(objectKey(prefix) + "/")) {
          if (isWriterLock(entry.key)) locks++;
          batch.push(entry.key);
          if (batch.length === DELETE_BATCH) await deleteKeys(batch.splice(0));
        }
        if (batch.length > 0) await deleteKeys(batch);
        if (locks === 0) break;
      }
    },

    async list(prefix: string, options?: ListOptions): Promise<ListPage> {
      const limit = options?.limit ?? Infinity;
      const after = options?.after;
      const bucketPrefix = objectKey(prefix) + "/";
      // Skip `after` and its part objects: `!~` sorts after `<after>!<digits>` and before any longer key.
      const startAfter = after !== undefined && objectKey(after) + PART_MARK + "~" > bucketPrefix ? objectKey(after) + PART_MARK + "~" : undefined;
      const keys: string[] = [];
      if (limit <= 0) {
        for await (const entry of listAll(bucketPrefix, startAfter, 100)) {
          const key = listedKey(entry.key);
          if (key !== undefined && (after === undefined || key > after)) return { keys, truncated: true };
        }
        return { keys, truncated: false };
      }
      for await (const entry of listAll(bucketPrefix, startAfter, Number.isFinite(limit) ? Math.min(1000, limit + 1) : 1000)) {
        const key = listedKey(entry.key);
        if (key === undefined || (after !== undefined && key <= after)) continue;
        if (keys[keys.length - 1] === key) continue;
        if (keys.length >= limit) return { keys, truncated: true };
        keys.push(key);
      }
      return { keys, truncated: false };
    },

    async close(): Promise<void> {},
  };
  return driver;
}

/** The offset a part object's suffix (after `!`) stands for, or `undefined` for other objects (the writer lock). */
function partOffset(suffix: string): number | undefined {
  return suffix.length === OFFSET_DIGITS && /^\d+$/.test(suffix) ? Number(suffix) : undefined;
}

function contiguous(allParts: PartObject[]): { parts: PartObject[]; partsSize: number } {
  const sorted = [...allParts].sort((a, b) => a.offset - b.offset);
  const parts: PartObject[] = [];
  let end = 0;
  for (const part of sorted) {
    if (part.offset !== end) break;
    parts.push(part);
    end += part.size;
  }
  return { parts, partsSize: end };
}

function readEnv(): Record<string, string | undefined> {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env ?? {};
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function toHexString(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

