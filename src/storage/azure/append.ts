/**
 * Appending: under the blob's lease (the writer lock, `lease.ts`), the body is
 * staged as blocks and committed after the blob's committed blocks with one
 * Put Block List (`If-Match` the ETag the append started from). So an append
 * is atomic: readers see the blob before it or after it, never a part.
 *
 * @module
 */
import { StorageError, type AppendOptions, type StorageBody } from "../driver.js";
import { PieceReader } from "../s3/body.js";
import { commitBlocks, committedBlocks, stageBlocks, type BlockList } from "./blocks.js";
import type { AzureContext } from "./context.js";
import { acquireLease, type Lease } from "./lease.js";
import { blockIds } from "./names.js";

/** The driver's `append`. */
export async function append(ctx: AzureContext, key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
  const blob = ctx.names.blob(key);
  const signal = options?.signal;
  const expected = options?.expectedSize;
  const reader = new PieceReader(body, ctx.blockSize, signal, 1);
  let lease: Lease | undefined;
  try {
    // The lease comes first, before any byte of the body: a body held open holds off moves.
    lease = await leaseOrCreate(ctx, blob, options);
    const list = await committedBlocks(ctx, blob, "append");
    if (!list) throw new StorageError("conflict", "the object was deleted while this append was in progress");
    if (expected !== undefined && list.size !== expected) throw new StorageError("conflict", `object size is ${list.size}, expected ${expected}`);
    const first = await reader.next();
    if (!first || first.length === 0) return list.size;
    const id = blockIds();
    // A blob written by one Put Blob has no blocks: its bytes become the first ones.
    const kept = list.size === list.blockBytes ? list.ids : await restage(ctx, blob, list, id, lease.id, signal);
    const staged = await stageBlocks(ctx, blob, first, reader, id, { start: kept === list.ids ? 0 : kept.length, leaseId: lease.id, signal, op: "append" });
    // Fails when a delete broke the lease or a move took the blob meanwhile: the append then leaves nothing.
    const headers: Record<string, string> = { "x-ms-lease-id": lease.id };
    // Azure may leave out the ETag of a blob without blocks; the lease alone then guards the commit.
    if (list.etag) headers["if-match"] = list.etag;
    await commitBlocks(ctx, blob, [...kept, ...staged.ids], { headers, signal, op: "append" });
    return list.size + staged.bytes;
  } catch (error) {
    await reader.cancel(error);
    if (error instanceof StorageError && error.code === "not_found") {
      throw new StorageError("conflict", "the object was deleted while this append was in progress", { cause: error });
    }
    throw error;
  } finally {
    await lease?.release();
  }
}

/**
 * The blob's lease, creating an empty blob first where the options allow it.
 * A missing blob that must not be created, or that cannot have the expected
 * size, is a `conflict` and nothing is created.
 */
async function leaseOrCreate(ctx: AzureContext, blob: string, options: AppendOptions | undefined): Promise<Lease> {
  const expected = options?.expectedSize;
  for (let attempt = 0; attempt < 3; attempt++) {
    const lease = await acquireLease(ctx.client, blob, "append", { wait: expected === undefined, signal: options?.signal, seconds: ctx.leaseSeconds });
    if (lease) return lease;
    if (options?.create === false || (expected !== undefined && expected !== 0)) throw new StorageError("conflict", "the object does not exist");
    // If-None-Match: a racing append may create it first; both then race for the lease.
    const created = await ctx.client.send({
      op: "append",
      method: "PUT",
      blob,
      headers: { "x-ms-blob-type": "BlockBlob", "if-none-match": "*" },
      body: new Uint8Array(0),
      accept: [409, 412],
    });
    void created.body?.cancel();
  }
  throw new StorageError("conflict", "the object was deleted while this append was starting");
}

/** Stage the bytes of a blob without blocks (one Put Blob) as blocks, pinned to its ETag; their ids. */
async function restage(ctx: AzureContext, blob: string, list: BlockList, id: (index: number) => string, leaseId: string, signal: AbortSignal | undefined): Promise<string[]> {
  const response = await ctx.client.send({ op: "append", method: "GET", blob, headers: list.etag ? { "if-match": list.etag } : {}, signal });
  const reader = new PieceReader(response.body!, ctx.blockSize, signal, 1);
  try {
    return (await stageBlocks(ctx, blob, undefined, reader, id, { leaseId, signal, op: "append" })).ids;
  } catch (error) {
    await reader.cancel(error);
    throw error;
  }
}
