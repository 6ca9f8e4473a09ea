/**
 * Block blobs: staging a body as blocks (Put Block, `concurrency` in flight),
 * committing a block list (Put Block List, the one atomic step of a write or an
 * append), and reading a blob's committed blocks (Get Block List).
 *
 * @module
 */
import { utf8 } from "../../util/bytes.js";
import { StorageError } from "../driver.js";
import { pieceBody, type Piece, type PieceReader } from "../s3/body.js";
import { children, childText, escapeXml, parseXml } from "../s3/xml.js";
import type { AzureContext } from "./context.js";

/** The most committed blocks a blob may have. */
export const MAX_BLOCKS = 50_000;

/** What {@link stageBlocks} staged. */
export interface Staged {
  ids: string[];
  bytes: number;
}

/**
 * Stage every piece `reader` still has (starting with `first`) as blocks of
 * `blob`, named by `id(n)` from `n = start`. Nothing is visible until a commit.
 */
export async function stageBlocks(
  ctx: AzureContext,
  blob: string,
  first: Piece | undefined,
  reader: PieceReader,
  id: (index: number) => string,
  options: { start?: number; leaseId?: string | undefined; signal?: AbortSignal | undefined; op: string },
): Promise<Staged> {
  const ids: string[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let bytes = 0;
  let index = options.start ?? 0;
  const headers: Record<string, string> = options.leaseId ? { "x-ms-lease-id": options.leaseId } : {};
  for (let piece = first ?? (await reader.next()); piece && piece.length > 0; piece = await reader.next()) {
    if (index >= MAX_BLOCKS) throw new StorageError("io", `azure ${options.op}: more than ${MAX_BLOCKS} blocks in one blob; raise blockSize`);
    const blockId = id(index++);
    ids.push(blockId);
    bytes += piece.length;
    const current = piece;
    const task = ctx.client
      .send({ op: options.op, method: "PUT", blob, query: { comp: "block", blockid: blockId }, headers, body: pieceBody(current, false), signal: options.signal })
      .then((response) => void response.body?.cancel())
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(() => current.release());
    const tracked: Promise<void> = task.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    while (inFlight.size >= ctx.concurrency) await Promise.race(inFlight);
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
  return { ids, bytes };
}

/** Commit `ids` (committed or just staged) as the whole content of `blob`: atomic, readers see the old or the new list. */
export async function commitBlocks(
  ctx: AzureContext,
  blob: string,
  ids: readonly string[],
  options: { headers?: Record<string, string>; signal?: AbortSignal | undefined; op: string },
): Promise<Response> {
  const xml = `<?xml version="1.0" encoding="utf-8"?><BlockList>${ids.map((id) => `<Latest>${escapeXml(id)}</Latest>`).join("")}</BlockList>`;
  const response = await ctx.client.send({
    op: options.op,
    method: "PUT",
    blob,
    query: { comp: "blocklist" },
    headers: { "content-type": "application/xml", ...options.headers },
    body: utf8(xml),
    signal: options.signal,
  });
  void response.body?.cancel();
  return response;
}

/** A blob's committed blocks, size and ETag (`undefined`: no such blob). */
export interface BlockList {
  ids: string[];
  /** The sum of the committed blocks' sizes. */
  blockBytes: number;
  /** The blob's size: more than `blockBytes` for a blob written by one Put Blob (no blocks). */
  size: number;
  etag: string;
}

/** Get Block List (committed blocks) of `blob`. */
export async function committedBlocks(ctx: AzureContext, blob: string, op: string): Promise<BlockList | undefined> {
  const response = await ctx.client.send({ op, method: "GET", blob, query: { comp: "blocklist", blocklisttype: "committed" }, accept: [404] });
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  const root = parseXml(await response.text());
  const blocks = children(children(root, "CommittedBlocks")[0] ?? { name: "", children: [], text: "" }, "Block");
  const ids = blocks.map((b) => childText(b, "Name") ?? "");
  const blockBytes = blocks.reduce((sum, b) => sum + Number(childText(b, "Size") ?? "0"), 0);
  const size = Number(response.headers.get("x-ms-blob-content-length") ?? blockBytes);
  return { ids, blockBytes, size, etag: response.headers.get("etag") ?? "" };
}
