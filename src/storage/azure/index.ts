/**
 * A storage driver on Azure Blob Storage (or Azurite), speaking the Blob REST
 * API over `fetch` with Shared Key signing by WebCrypto. Runtime-neutral:
 * `fetch`, WebCrypto and web streams only.
 *
 * How the contract maps onto Azure (see docs/storage-azure.md):
 * - A key is the block blob `<rootDirectory>/<key>`, nothing else.
 * - `write` (`write.ts`): one Put Blob up to `blockSize`, else staged blocks
 *   and one Put Block List; atomic either way.
 * - `append` (`append.ts`): under the blob's lease, the body is staged as
 *   blocks and committed after the committed ones (Put Block List, `If-Match`).
 * - One writer, a final move: `append` and `move` hold the blob's lease
 *   (`lease.ts`), so they exclude each other across processes; `move`
 *   (`move.ts`) checks `expectedSize` under it, copies server-side (Copy Blob,
 *   pinned to the ETag it checked) and deletes the source naming the lease.
 * - `delete` (`delete.ts`) breaks a lease first: a cancel wins over an append.
 * - `list` (`list.ts`): List Blobs with a prefix; markers are remembered so a
 *   listing continued page by page costs one request a page.
 * - `redirectURL` (`redirect.ts`): a read-only service SAS URL.
 *
 * @module
 */
import type { StorageDriver } from "../driver.js";
import { append } from "./append.js";
import { AzureClient } from "./client.js";
import type { AzureContext } from "./context.js";
import { deleteObject, deletePrefix } from "./delete.js";
import { LEASE_SECONDS } from "./lease.js";
import { list } from "./list.js";
import { move } from "./move.js";
import { BlobNames } from "./names.js";
import { read, stat } from "./read.js";
import { redirectURL } from "./redirect.js";
import { write } from "./write.js";

/** Options of {@link azureStorage}. */
export interface AzureStorageOptions {
  /** The storage account name (Azurite: `devstoreaccount1`). */
  accountName: string;
  /** The account key, base64 as the portal shows it. */
  accountKey: string;
  /** The container; it must exist. */
  container: string;
  /**
   * The blob service URL, e.g. Azurite's `http://127.0.0.1:10000/devstoreaccount1`.
   * Default `https://<accountName>.blob.<realm>`.
   */
  serviceURL?: string;
  /** The domain of the default service URL; default `core.windows.net` (Distribution's `realm`). */
  realm?: string;
  /** Prefix for every blob name, e.g. `"registry"`. */
  rootDirectory?: string;
  /** Block size in bytes; default 8 MiB, at most 4000 MiB. Writes up to it are one request; a blob has at most 50 000 blocks. */
  blockSize?: number;
  /**
   * How long the lease that makes an append or a move the one writer of a key
   * lasts unless renewed (it is renewed every third of that while the operation
   * runs), in seconds: 15 to 60, default 60. A process that dies holding one
   * blocks appends and moves of that key for at most this long.
   */
  leaseSeconds?: number;
  /** Blocks staged in parallel by one write; default 2. A write buffers at most `blockSize × (concurrency + 1)` bytes. */
  concurrency?: number;
  /** Retries of a failed request (network errors, 5xx, 408, 429); default 5. */
  maxRetries?: number;
  /** Base delay of the exponential backoff in ms; default 100. */
  retryBaseMs?: number;
  /** Allow a plain `http:` service URL that is not on loopback; default false. */
  allowHttp?: boolean;
  /** The fetch to use (for tests, proxies or fault injection); default `globalThis.fetch`. */
  fetch?: typeof fetch;
}

const MiB = 1024 * 1024;

/** Create an Azure Blob storage driver. The container must exist. */
export function azureStorage(options: AzureStorageOptions): StorageDriver {
  const ctx = createContext(options);
  return {
    name: "azure",
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

/** Check the options and build the driver's state. */
function createContext(options: AzureStorageOptions): AzureContext {
  const { accountName, accountKey, container } = options;
  if (!accountName || !/^[a-z0-9]{3,24}$/.test(accountName)) throw new TypeError("azureStorage: accountName must be 3 to 24 lower-case letters and digits");
  if (!accountKey || !/^[A-Za-z0-9+/]+={0,2}$/.test(accountKey)) throw new TypeError("azureStorage: accountKey must be the base64 account key");
  if (!container || !/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(container)) {
    throw new TypeError("azureStorage: container must be 3 to 63 lower-case letters, digits and single hyphens");
  }
  const realm = options.realm ?? "core.windows.net";
  let serviceURL: URL;
  try {
    serviceURL = new URL(options.serviceURL ?? `https://${accountName}.blob.${realm}`);
  } catch {
    throw new TypeError("azureStorage: serviceURL is not a valid URL");
  }
  if (serviceURL.protocol !== "https:" && serviceURL.protocol !== "http:") throw new TypeError("azureStorage: serviceURL must be http: or https:");
  if (serviceURL.search || serviceURL.hash) throw new TypeError("azureStorage: serviceURL must have no query (no SAS): the driver signs with the account key");
  if (serviceURL.protocol === "http:" && !options.allowHttp && !isLoopback(serviceURL.hostname)) {
    throw new TypeError("azureStorage: plain http is only allowed on loopback; use https or set allowHttp");
  }
  const blockSize = options.blockSize ?? 8 * MiB;
  if (!Number.isSafeInteger(blockSize) || blockSize < 1 || blockSize > 4000 * MiB) throw new TypeError("azureStorage: blockSize must be an integer from 1 byte to 4000 MiB");
  const concurrency = options.concurrency ?? 2;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError("azureStorage: concurrency must be a positive integer");
  const root = (options.rootDirectory ?? "").replace(/^\/+|\/+$/g, "");
  if (root && (!/^[A-Za-z0-9._@:+=/-]+$/.test(root) || root.split("/").some((s) => s === "" || s === "." || s === ".."))) {
    throw new TypeError("azureStorage: rootDirectory has invalid characters");
  }
  const leaseSeconds = options.leaseSeconds ?? LEASE_SECONDS;
  if (!Number.isSafeInteger(leaseSeconds) || leaseSeconds < 15 || leaseSeconds > 60) throw new TypeError("azureStorage: leaseSeconds must be an integer from 15 to 60");
  const maxRetries = options.maxRetries ?? 5;
  const client = new AzureClient({
    account: accountName,
    accountKey,
    container,
    serviceURL,
    maxRetries,
    retryBaseMs: options.retryBaseMs ?? 100,
    fetch: options.fetch ?? globalThis.fetch,
  });
  return { client, names: new BlobNames(root), blockSize, concurrency, leaseSeconds, maxRetries };
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
