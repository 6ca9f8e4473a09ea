/**
 * The S3 request layer: URL building (path-style or virtual-hosted), SigV4
 * signing with `aws4fetch`, retries with exponential backoff and jitter, and
 * mapping of S3 error responses to {@link StorageError}s. Runtime-neutral:
 * only `fetch`, WebCrypto and web streams.
 *
 * @module
 */
import { AwsV4Signer } from "aws4fetch";
import { toHex, utf8 } from "../../util/bytes.js";
import { StorageError } from "../driver.js";
import { childText, parseXml, type XmlElement } from "./xml.js";

/** What the request layer needs to know. */
export interface S3ClientConfig {
  bucket: string;
  region: string;
  endpoint: URL;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
  maxRetries: number;
  /** Base delay of the exponential backoff, in ms. */
  retryBaseMs: number;
  signPayload: boolean;
  fetch: typeof fetch;
}

/** A request body that can be produced again for a retry. */
export type ReplayableBody =
  | Uint8Array
  | string
  | { length: number; open: () => ReadableStream<Uint8Array> };

export interface S3Request {
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  /** Object key (already including the root directory); omitted for bucket requests. */
  key?: string;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  body?: ReplayableBody;
  signal?: AbortSignal | undefined;
  /** Statuses the caller handles itself (never retried, never thrown). */
  accept?: number[];
  /** Describes the operation in error messages, e.g. `"write"`. */
  op: string;
  /** Set false for requests that must not be retried. */
  idempotent?: boolean;
}

const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
const MAX_DELAY_MS = 5_000;

/** RFC 3986 encoding of one key segment, as SigV4 canonicalises it for S3. */
export function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Encode a key for a URL path, keeping its `/` separators. */
export function encodeKey(key: string): string {
  return key.split("/").map(encodeSegment).join("/");
}

export class S3Client {
  readonly #config: S3ClientConfig;
  readonly #signingCache = new Map<string, ArrayBuffer>();

  constructor(config: S3ClientConfig) {
    this.#config = config;
  }

  get bucket(): string {
    return this.#config.bucket;
  }

  /** The `x-amz-copy-source` value for an object in this bucket. */
  copySource(key: string): string {
    return `/${encodeSegment(this.#config.bucket)}/${encodeKey(key)}`;
  }

  url(key: string | undefined, query?: S3Request["query"]): string {
    const { endpoint, bucket, forcePathStyle } = this.#config;
    const base = new URL(endpoint.href);
    const basePath = base.pathname.replace(/\/+$/, "");
    if (forcePathStyle) {
      base.pathname = `${basePath}/${encodeSegment(bucket)}${key === undefined ? "" : "/" + encodeKey(key)}`;
    } else {
      base.hostname = `${bucket}.${base.hostname}`;
      base.pathname = `${basePath}/${key === undefined ? "" : encodeKey(key)}`;
    }
    const params: string[] = [];
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue;
      params.push(value === "" ? encodeSegment(name) : `${encodeSegment(name)}=${encodeSegment(String(value))}`);
    }
    base.search = params.length ? "?" + params.join("&") : "";
    return base.href;
  }

  /**
   * Send a signed request, retrying network errors, 5xx and 429 answers with
   * exponential backoff and full jitter when the request is idempotent.
   * Answers with a status in `accept` or below 300 are returned; others throw.
   */
  async send(request: S3Request): Promise<Response> {
    const { maxRetries, retryBaseMs } = this.#config;
    const retries = request.idempotent === false ? 0 : maxRetries;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#sendOnce(request);
      } catch (error) {
        if (request.signal?.aborted) throw new StorageError("aborted", `${request.op} aborted`, { cause: request.signal.reason });
        if (error instanceof StorageError) throw error;
        if (attempt < retries) {
          await sleep(backoff(attempt, retryBaseMs), request.signal);
          continue;
        }
        throw new StorageError("io", `s3 ${request.op}${describeKey(request.key)}: network error (${errorMessage(error)})`, { cause: error });
      }
      if (response.status < 300 || request.accept?.includes(response.status)) return response;
      let code: string | undefined;
      let message: string | undefined;
      if (request.method !== "HEAD") {
        ({ code, message } = await readError(response));
      } else {
        await response.body?.cancel().catch(() => {});
      }
      const retryable = RETRY_STATUS.has(response.status) || code === "RequestTimeout" || code === "SlowDown" || code === "InternalError";
      if (retryable && attempt < retries) {
        await sleep(backoff(attempt, retryBaseMs, response.headers.get("retry-after")), request.signal);
        continue;
      }
      throw statusError(request, response.status, code, message);
    }
  }

  /**
   * A presigned GET URL for `key` (SigV4 query signing), valid for
   * `expiresInSeconds` from `now`. Nothing is sent: anyone holding the URL can
   * read the object until it expires, so it is handed only to a caller
   * already authorized to read it.
   */
  async presignGet(key: string, expiresInSeconds: number, now: Date = new Date()): Promise<string> {
    const { accessKeyId, secretAccessKey, sessionToken, region } = this.#config;
    const url = new URL(this.url(key));
    url.searchParams.set("X-Amz-Expires", String(expiresInSeconds));
    const signer = new AwsV4Signer({
      method: "GET",
      url: url.toString(),
      accessKeyId,
      secretAccessKey,
      sessionToken,
      service: "s3",
      region,
      signQuery: true,
      datetime: now.toISOString().replace(/[:-]|\.\d{3}/g, ""),
      cache: this.#signingCache,
    });
    return (await signer.sign()).url.toString();
  }

  async #sendOnce(request: S3Request): Promise<Response> {
    const { accessKeyId, secretAccessKey, sessionToken, region, signPayload } = this.#config;
    const url = this.url(request.key, request.query);
    const headers: Record<string, string> = { ...request.headers };
    let body: BodyInit | undefined;
    const source = request.body;
    if (source instanceof Uint8Array || typeof source === "string") {
      body = source as BodyInit;
      if (signPayload) headers["x-amz-content-sha256"] = await sha256Hex(source);
    } else if (source) {
      body = source.open();
      headers["content-length"] = String(source.length);
    }
    const signer = new AwsV4Signer({
      method: request.method,
      url,
      headers,
      accessKeyId,
      secretAccessKey,
      sessionToken,
      service: "s3",
      region,
      cache: this.#signingCache,
    });
    const signed = await signer.sign();
    const init: RequestInit & { duplex?: "half" } = { method: request.method, headers: signed.headers };
    if (body !== undefined) init.body = body;
    if (body instanceof ReadableStream) init.duplex = "half";
    if (request.signal) init.signal = request.signal;
    return this.#config.fetch.call(globalThis, signed.url.toString(), init);
  }

  /** Send a request whose answer is an XML document, and parse it. */
  async sendXml(request: S3Request): Promise<XmlElement> {
    const response = await this.send(request);
    const text = await response.text();
    const root = parseXml(text);
    // CopyObject, UploadPartCopy and CompleteMultipartUpload may answer 200 with an error body.
    if (root.name === "Error") throw statusError(request, response.status, childText(root, "Code"), childText(root, "Message"));
    return root;
  }
}

/** Read an S3 error body's `Code` and `Message`, if it has one. */
async function readError(response: Response): Promise<{ code?: string; message?: string }> {
  try {
    const text = await response.text();
    if (!text.trimStart().startsWith("<")) return {};
    const root = parseXml(text);
    const code = childText(root, "Code");
    const message = childText(root, "Message");
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  } catch {
    return {};
  }
}

function statusError(request: S3Request, status: number, code?: string, message?: string): StorageError {
  const what = `s3 ${request.op}${describeKey(request.key)}: ${status}${code ? " " + code : ""}${message ? ` (${truncate(message)})` : ""}`;
  if (status === 412 || code === "PreconditionFailed") return new StorageError("conflict", what);
  // A quota (radosgw, AWS) or a full server (MinIO answers 507): the registry answers 507, not 500.
  if (status === 507 || code === "QuotaExceeded" || code === "XMinioStorageFull") return new StorageError("no_space", what);
  if (code === "NoSuchBucket") return new StorageError("io", `${what}: the bucket does not exist`);
  if (status === 403) return new StorageError("io", `${what}: check the credentials and the bucket policy`);
  if (status === 404 && code === "NoSuchKey") return new StorageError("not_found", what);
  return new StorageError("io", what);
}

function describeKey(key: string | undefined): string {
  return key === undefined ? "" : ` ${JSON.stringify(key)}`;
}

function truncate(text: string): string {
  return text.length > 200 ? text.slice(0, 200) + "…" : text;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : "";
    return error.message + detail;
  }
  return String(error);
}

/** Full-jitter exponential backoff, honouring a short `Retry-After`. */
export function backoff(attempt: number, baseMs: number, retryAfter?: string | null): number {
  const cap = Math.min(MAX_DELAY_MS, baseMs * 2 ** attempt);
  const jittered = cap / 2 + Math.random() * (cap / 2);
  const hinted = retryAfter && /^\d+$/.test(retryAfter) ? Math.min(MAX_DELAY_MS, Number(retryAfter) * 1000) : 0;
  return Math.max(jittered, hinted);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new StorageError("aborted", "aborted", { cause: signal.reason }));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new StorageError("aborted", "aborted", { cause: signal?.reason }));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function sha256Hex(body: Uint8Array | string): Promise<string> {
  const bytes = typeof body === "string" ? utf8(body) : body;
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)));
}
