/**
 * Writing a whole object: one PUT for a body up to `partSize`, a multipart
 * upload beyond. Parts are buffered, so memory per write is bounded by
 * `partSize × (concurrency + 1)`, and by the driver's budget (`budget.ts`).
 *
 * A write does not look for part objects of an earlier append under its key:
 * the plain object hides them (`stat`, `read`, `list` and `move` take the plain
 * object), an append to it removes them, and `delete` removes them with it. So
 * a write is its PUT (or multipart upload) and nothing else.
 *
 * @module
 */
import type { StorageBody, WriteOptions } from "../driver.js";
import { PieceReader, pieceBody, type Piece } from "./body.js";
import type { S3Context } from "./context.js";
import { multipartWrite } from "./multipart.js";

/** PUT one buffered piece as the object `rawKey`. */
export async function putObject(
  ctx: S3Context,
  rawKey: string,
  piece: Piece,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  op: string,
  accept?: number[],
): Promise<Response> {
  return ctx.client.send({ op, method: "PUT", key: rawKey, body: pieceBody(piece, ctx.signPayload), headers, signal, ...(accept ? { accept } : {}) });
}

/** The driver's `write`: the object replaces whatever was under `key`, part objects included. */
export async function write(ctx: S3Context, key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
  const signal = options?.signal;
  const rawKey = ctx.keys.objectKey(key);
  const reader = new PieceReader(body, ctx.partSize, signal, ctx.concurrency + 1, ctx.budget);
  let size: number;
  try {
    const first = (await reader.next())!;
    if (first.length < ctx.partSize || (await reader.atEnd())) {
      const response = await putObject(ctx, rawKey, first, {}, signal, "write").finally(() => first.release());
      void response.body?.cancel();
      size = first.length;
    } else {
      size = await multipartWrite(ctx, rawKey, first, reader, signal);
    }
  } catch (error) {
    await reader.cancel(error);
    throw error;
  } finally {
    reader.dispose();
  }
  ctx.appended.forget(key);
  return size;
}
