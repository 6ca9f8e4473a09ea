/**
 * Writing a whole blob: one Put Blob for a body up to `blockSize`, else the
 * body staged as blocks and committed with one Put Block List. Both are atomic:
 * readers see the old blob or the whole new one, and a failed or aborted write
 * leaves the old one (staged blocks stay uncommitted, and Azure drops them).
 * Blocks are buffered, so memory per write is bounded by `blockSize × (concurrency + 1)`.
 *
 * @module
 */
import type { StorageBody, WriteOptions } from "../driver.js";
import { PieceReader, pieceBody } from "../s3/body.js";
import { commitBlocks, stageBlocks } from "./blocks.js";
import type { AzureContext } from "./context.js";
import { blockIds } from "./names.js";

/** The driver's `write`. */
export async function write(ctx: AzureContext, key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
  const signal = options?.signal;
  const blob = ctx.names.blob(key);
  const reader = new PieceReader(body, ctx.blockSize, signal, ctx.concurrency + 1);
  try {
    const first = (await reader.next())!;
    if (first.length < ctx.blockSize || (await reader.atEnd())) {
      const response = await ctx.client
        .send({ op: "write", method: "PUT", blob, headers: { "x-ms-blob-type": "BlockBlob" }, body: pieceBody(first, false), signal })
        .finally(() => first.release());
      void response.body?.cancel();
      return first.length;
    }
    const staged = await stageBlocks(ctx, blob, first, reader, blockIds(), { signal, op: "write" });
    await commitBlocks(ctx, blob, staged.ids, { signal, op: "write" });
    return staged.bytes;
  } catch (error) {
    await reader.cancel(error);
    throw error;
  }
}
