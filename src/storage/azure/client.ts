/**
 * The Azure Blob request layer: URLs of blobs in one container, Shared Key
 * signing (HMAC-SHA256 over Azure's string-to-sign, by WebCrypto), retries with
 * exponential backoff and jitter, and the mapping of Azure error answers to
 * {@link StorageError}s. Runtime-neutral: only `fetch`, WebCrypto and web streams.
 *
 * @module
 */
import { b64, fromB64, utf8 } from "../../util/bytes.js";
import { StorageError } from "../driver.js";
import { backoff, sleep, type ReplayableBody } from "../s3/client.js";
import { childText, parseXml } from "../s3/xml.js";

/** The REST API version the driver speaks (sent as `x-ms-version`, and `sv` of SAS URLs). */
export const API_VERSION = "2021-08-06";

/** What the request layer needs to know. */
export interface AzureClientConfig {
  account: string;
  /** The account key, base64 as the portal shows it. */
  accountKey: string;
  container: string;
  /** The blob service URL, e.g. `https://acct.blob.core.windows.net` or Azurite's `http://127.0.0.1:10000/devstoreaccount1`. */
  serviceURL: URL;
  maxRetries: number;
  retryBaseMs: number;
  fetch: typeof fetch;
}

/** One request to the blob service. */
export interface AzureRequest {
  method: "GET" | "HEAD" | "PUT" | "DELETE";
  /** Blob name (root directory included); omitted for container requests. */
  blob?: string;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  body?: ReplayableBody;
  signal?: AbortSignal | undefined;
  /** Statuses the caller handles itself (never retried, never thrown). */
  accept?: number[];
  /** Describes the operation in error messages, e.g. `"write"`. */
  op: string;
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/** Encode a blob name for a URL path, keeping its `/` separators. */
function encodeName(name: string): string {
  return name.split("/").map(encodeURIComponent).join("/");
}

/** Signed requests against one container. */
export class AzureClient {
  readonly #config: AzureClientConfig;
  #key: Promise<CryptoKey> | undefined;

  constructor(config: AzureClientConfig) {
    this.#config = config;
  }

  get account(): string {
    return this.#config.account;
  }

  get container(): string {
    return this.#config.container;
  }

  /** The URL of a blob (or of the container), with a query. */
  url(blob: string | undefined, query?: AzureRequest["query"]): URL {
    const url = new URL(this.#config.serviceURL.href);
    const base = url.pathname.replace(/\/+$/, "");
    url.pathname = `${base}/${encodeURIComponent(this.#config.container)}${blob === undefined ? "" : "/" + encodeName(blob)}`;
    const params: string[] = [];
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) params.push(`${name}=${encodeURIComponent(String(value))}`);
    }
    url.search = params.length ? "?" + params.join("&") : "";
    return url;
  }

  /** Base64 HMAC-SHA256 of `text` with the account key (Shared Key and SAS signatures). */
  async sign(text: string): Promise<string> {
    this.#key ??= crypto.subtle.importKey("raw", fromB64(this.#config.accountKey) as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const signature = await crypto.subtle.sign("HMAC", await this.#key, utf8(text) as Uint8Array<ArrayBuffer>);
    return b64(new Uint8Array(signature));
  }

  /**
   * Send a signed request, retrying network errors, 5xx, 408 and 429 with
   * exponential backoff and jitter (every request the driver sends can be
   * replayed). Answers below 300 or in `accept` are returned; others throw.
   */
  async send(request: AzureRequest): Promise<Response> {
    const { maxRetries, retryBaseMs } = this.#config;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#sendOnce(request);
      } catch (error) {
        if (request.signal?.aborted) throw new StorageError("aborted", `${request.op} aborted`, { cause: request.signal.reason });
        if (attempt < maxRetries) {
          await sleep(backoff(attempt, retryBaseMs), request.signal);
          continue;
        }
        throw new StorageError("io", `azure ${request.op}${describe(request.blob)}: network error (${errorMessage(error)})`, { cause: error });
      }
      // A missing container is never "no such blob", even where the caller accepts a 404.
      const missingContainer = response.status === 404 && response.headers.get("x-ms-error-code") === "ContainerNotFound";
      if (response.status < 300 || (request.accept?.includes(response.status) && !missingContainer)) return response;
      const { code, message } = await readError(response);
      if (RETRY_STATUS.has(response.status) && attempt < maxRetries) {
        await sleep(backoff(attempt, retryBaseMs, response.headers.get("retry-after")), request.signal);
        continue;
      }
      throw statusError(request, response.status, code, message);
    }
  }

  async #sendOnce(request: AzureRequest): Promise<Response> {
    const url = this.url(request.blob, request.query);
    const headers: Record<string, string> = { ...request.headers, "x-ms-date": new Date().toUTCString(), "x-ms-version": API_VERSION };
    let body: BodyInit | undefined;
    let length = 0;
    const source = request.body;
    if (typeof source === "string") throw new TypeError("azure: string bodies are not sent (fetch would add a content type)");
    if (source instanceof Uint8Array) {
      body = source as BodyInit;
      length = source.byteLength;
    } else if (source) {
      body = source.open();
      length = source.length;
      headers["content-length"] = String(length);
    }
    headers.authorization = `SharedKey ${this.#config.account}:${await this.sign(stringToSign(request.method, url, headers, length, this.#config.account))}`;
    const init: RequestInit & { duplex?: "half" } = { method: request.method, headers };
    if (body !== undefined) init.body = body;
    if (body instanceof ReadableStream) init.duplex = "half";
    if (request.signal) init.signal = request.signal;
    return this.#config.fetch.call(globalThis, url.href, init);
  }
}

/** Azure's Shared Key string-to-sign (version 2015-02-21 and later: a zero length is empty). */
function stringToSign(method: string, url: URL, headers: Record<string, string>, length: number, account: string): string {
  const h = (name: string): string => headers[name] ?? "";
  const standard = [
    method,
    h("content-encoding"),
    h("content-language"),
    length > 0 ? String(length) : "",
    h("content-md5"),
    h("content-type"),
    "", // Date: x-ms-date is sent instead
    h("if-modified-since"),
    h("if-match"),
    h("if-none-match"),
    h("if-unmodified-since"),
    h("range"),
  ];
  const canonicalHeaders = Object.keys(headers)
    .filter((name) => name.startsWith("x-ms-"))
    .sort()
    .map((name) => `${name}:${headers[name]!.replace(/\s+/g, " ").trim()}\n`)
    .join("");
  let resource = `/${account}${url.pathname}`;
  const params = [...url.searchParams.keys()].map((k) => k.toLowerCase()).sort();
  for (const name of new Set(params)) resource += `\n${name}:${url.searchParams.getAll(name).sort().join(",")}`;
  return standard.join("\n") + "\n" + canonicalHeaders + resource;
}

/** Read an Azure error's code (header `x-ms-error-code`, else the XML body) and message. */
async function readError(response: Response): Promise<{ code?: string; message?: string }> {
  const header = response.headers.get("x-ms-error-code") ?? undefined;
  try {
    const text = await response.text();
    if (!text.trimStart().startsWith("<")) return header ? { code: header } : {};
    const root = parseXml(text);
    const code = header ?? childText(root, "Code");
    const message = childText(root, "Message")?.split("\n")[0];
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  } catch {
    return header ? { code: header } : {};
  }
}

/** Lease and precondition failures: another writer holds the blob, or it changed. */
const CONFLICT_CODES = new Set([
  "LeaseAlreadyPresent", "LeaseIdMissing", "LeaseIdMismatchWithBlobOperation", "LeaseIdMismatchWithLeaseOperation",
  "LeaseLost", "LeaseNotPresentWithBlobOperation", "LeaseNotPresentWithLeaseOperation", "LeaseIsBrokenAndCannotBeRenewed",
  "ConditionNotMet", "BlobAlreadyExists", "TargetConditionNotMet", "SourceConditionNotMet",
]);

function statusError(request: AzureRequest, status: number, code?: string, message?: string): StorageError {
  const what = `azure ${request.op}${describe(request.blob)}: ${status}${code ? " " + code : ""}${message ? ` (${truncate(message)})` : ""}`;
  if (status === 412 || (code !== undefined && CONFLICT_CODES.has(code))) return new StorageError("conflict", what);
  if (code === "ContainerNotFound") return new StorageError("io", `${what}: the container does not exist`);
  if (status === 403) return new StorageError("io", `${what}: check the account name and key`);
  if (code === "BlobNotFound" || code === "CannotVerifyCopySource") return new StorageError("not_found", what);
  return new StorageError("io", what);
}

function describe(blob: string | undefined): string {
  return blob === undefined ? "" : ` ${JSON.stringify(blob)}`;
}

function truncate(text: string): string {
  return text.length > 200 ? text.slice(0, 200) + "…" : text;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return error.message + (cause instanceof Error ? `: ${cause.message}` : "");
  }
  return String(error);
}
