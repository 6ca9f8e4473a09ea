/**
 * `delete` and `deletePrefix`: remove a file or a directory tree, then the
 * directories left empty above it.
 *
 * @module
 */
import { promises as fsp } from "node:fs";
import path from "node:path";
import type { FsContext } from "./context.js";
import { RETRIES, pruneEmptyDirs, syncDir } from "./dirs.js";
import { errno, isMissing, toStorageError } from "./errors.js";
import { pathOf } from "./paths.js";

/** The driver's `delete`: a missing key, or a key that is only a prefix, is not an error. */
export async function deleteObject(ctx: FsContext, key: string): Promise<void> {
  const file = pathOf(ctx, key);
  await ctx.ready;
  try {
    const info = await fsp.lstat(file);
    if (info.isDirectory()) return; // a prefix, not an object
    ctx.writeback.forget(file);
    await fsp.unlink(file);
  } catch (error) {
    if (isMissing(error) || errno(error) === "EISDIR" || errno(error) === "EPERM") return;
    throw toStorageError(error, "cannot delete");
  }
  // An acknowledged delete (a tag, a user) must not come back after a power loss.
  if (ctx.sync) await syncDir(path.dirname(file)).catch(() => {});
  await pruneEmptyDirs(ctx, path.dirname(file));
}

/** The driver's `deletePrefix`: remove the directory of `prefix` and all below it. */
export async function deletePrefix(ctx: FsContext, prefix: string): Promise<void> {
  const dir = pathOf(ctx, prefix);
  await ctx.ready;
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await fsp.lstat(dir);
      if (!info.isDirectory()) return; // an object named like the prefix is not under it
      ctx.writeback.forgetUnder(dir);
      await fsp.rm(dir, { recursive: true, force: true });
      break;
    } catch (error) {
      if (isMissing(error)) break;
      // A concurrent writer added a file while we removed the tree: go again.
      if (attempt < RETRIES && errno(error) === "ENOTEMPTY") continue;
      throw toStorageError(error, "cannot delete");
    }
  }
  await pruneEmptyDirs(ctx, path.dirname(dir));
}
