/**
 * Moving: the final step of an upload. Under the source's lease, check
 * `expectedSize`, copy the blob server-side (Copy Blob From URL up to 256 MiB,
 * else Copy Blob, polled while the service reports it pending; either pinned to
 * the ETag it checked), then delete the source naming the lease.
 *
 * @module
 */
import { StorageError, type MoveOptions } from "../driver.js";
import { sleep } from "../s3/client.js";
import type { AzureContext } from "./context.js";
import { acquireLease } from "./lease.js";
import { sasURL } from "./redirect.js";

/** How long a pending copy is waited for, in ms. */
const COPY_WAIT_MS = 10 * 60_000;

/** The driver's `move`. */
export async function move(ctx: AzureContext, from: string, to: string, options?: MoveOptions): Promise<void> {
  const source = ctx.names.blob(from);
  const lease = await acquireLease(ctx.client, source, "move", { seconds: ctx.leaseSeconds });
  if (!lease) throw new StorageError("not_found", "no object to move");
  let deleted = false;
  try {
    // Under the lease nothing is appended: these are the bytes the move publishes.
    const head = await ctx.client.send({ op: "move", method: "HEAD", blob: source, accept: [404] });
    if (head.status === 404) throw new StorageError("not_found", "no object to move");
    const size = Number(head.headers.get("content-length") ?? "0");
    if (options?.expectedSize !== undefined && size !== options.expectedSize) {
      throw new StorageError("conflict", `object size is ${size}, expected ${options.expectedSize}`);
    }
    if (from === to) return;
    await copyBlob(ctx, source, head.headers.get("etag") ?? "", size, ctx.names.blob(to));
    const removed = await ctx.client.send({ op: "move", method: "DELETE", blob: source, headers: { "x-ms-lease-id": lease.id }, accept: [404] });
    void removed.body?.cancel();
    deleted = true;
  } finally {
    if (!deleted) await lease.release();
  }
}

/** The largest source Copy Blob From URL copies synchronously (Azure's limit: 256 MiB). */
export const SYNC_COPY_LIMIT = 256 * 1024 * 1024;
/** How long the SAS of a synchronous copy's source stays valid. */
const SOURCE_SAS_MS = 15 * 60_000;

/**
 * Copy blob `source` (as of `etag`, `size` bytes) to `target` in the same
 * account. Up to {@link SYNC_COPY_LIMIT}, Copy Blob From URL: the target appears
 * whole when the answer comes. Larger, Copy Blob, polled until it is done; Azure
 * usually finishes a copy within one account before it answers, but while it
 * reports one pending the target exists before all its bytes do.
 */
export async function copyBlob(ctx: AzureContext, source: string, etag: string, size: number, target: string): Promise<void> {
  const { client } = ctx;
  const sync = size <= SYNC_COPY_LIMIT;
  const headers: Record<string, string> = sync
    // The service reads the source through this URL: a short read-only SAS authorizes it.
    ? { "x-ms-copy-source": await sasURL(client, source, new Date(Date.now() + SOURCE_SAS_MS)), "x-ms-requires-sync": "true" }
    : { "x-ms-copy-source": client.url(source).href };
  if (etag) headers["x-ms-source-if-match"] = etag;
  const started = await client.send({ op: "move", method: "PUT", blob: target, headers });
  void started.body?.cancel();
  let status = started.headers.get("x-ms-copy-status");
  const id = started.headers.get("x-ms-copy-id");
  const deadline = Date.now() + COPY_WAIT_MS;
  for (let attempt = 0; status === "pending"; attempt++) {
    if (Date.now() > deadline) throw new StorageError("io", `azure move ${JSON.stringify(target)}: the copy is still pending after ${COPY_WAIT_MS / 60_000} minutes`);
    await sleep(Math.min(1_000, 50 * 2 ** attempt));
    const head = await client.send({ op: "move", method: "HEAD", blob: target });
    if (id && head.headers.get("x-ms-copy-id") !== id) throw new StorageError("conflict", `azure move ${JSON.stringify(target)}: another copy replaced this one`);
    status = head.headers.get("x-ms-copy-status");
  }
  if (status !== null && status !== "success") throw new StorageError("io", `azure move ${JSON.stringify(target)}: the copy ended ${status}`);
}
