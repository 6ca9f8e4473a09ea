/**
 * `move`, the publication of an upload: under the source's writer lock, its
 * bytes are fsynced once (appends are not), then it is renamed onto the
 * target.
 *
 * @module
 */
import { promises as fsp } from "node:fs";
import path from "node:path";
import { StorageError, type MoveOptions } from "../driver.js";
import { takeWriter } from "./append.js";
import type { FsContext } from "./context.js";
import { pruneEmptyDirs, renameInto, syncDir } from "./dirs.js";
import { syncFile } from "./files.js";
import { pathOf } from "./paths.js";

/** The driver's `move`. */
export async function moveObject(ctx: FsContext, from: string, to: string, options?: MoveOptions): Promise<void> {
  const source = pathOf(ctx, from);
  const target = pathOf(ctx, to);
  await ctx.ready;
  const release = await takeWriter(ctx, source, false);
  if (release === "missing") throw new StorageError("not_found", "no object to move");
  try {
    const info = await fsp.lstat(source).catch(() => undefined);
    if (!info?.isFile()) throw new StorageError("not_found", "no object to move");
    if (options?.expectedSize !== undefined && info.size !== options.expectedSize) {
      throw new StorageError("conflict", `object size is ${info.size}, expected ${options.expectedSize}`);
    }
    if (source === target) return;
    ctx.writeback.forget(source);
    // Appends are not synced one by one: flush the object's bytes once, before it becomes visible.
    if (ctx.sync) await syncFile(source);
    // A source that vanishes meanwhile (a delete) surfaces as ENOENT, mapped to "not_found".
    await renameInto(ctx, source, target);
  } finally {
    await release.release();
  }
  if (ctx.sync) await syncDir(path.dirname(source)).catch(() => {});
  await pruneEmptyDirs(ctx, path.dirname(source));
}
