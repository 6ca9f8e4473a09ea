/**
 * Moving: the final step of an upload. Under the source's writer lock, check
 * `expectedSize`, publish exactly the objects listed (pinned by their ETags)
 * at the target by a server-side copy or assembly, then delete the source.
 *
 * @module
 */
import { StorageError, type MoveOptions } from "../driver.js";
import type { S3Context } from "./context.js";
import { deleteKeys } from "./delete.js";
import { assemble, copyObject, mergedBody, planAssembly } from "./multipart.js";
import { inspect, type Stored } from "./parts.js";
import { acquireWriter } from "./writer-lock.js";

/** The driver's `move`. */
export async function move(ctx: S3Context, from: string, to: string, options?: MoveOptions): Promise<void> {
  const expected = options?.expectedSize;
  const lock = await acquireWriter(ctx.client, ctx.keys.objectKey(from), "move");
  let published = false;
  try {
    // Under the lock nothing is appended: these are the bytes the move publishes.
    const stored = await inspect(ctx, from);
    if (!stored.plain && stored.parts.length === 0) throw new StorageError("not_found", "no object to move");
    const size = stored.plain ? stored.plain.size : stored.partsSize;
    if (expected !== undefined && size !== expected) {
      throw new StorageError("conflict", `object size is ${size}, expected ${expected}`);
    }
    if (stored.plain && from === to) return;
    await publish(ctx, stored, ctx.keys.objectKey(to));
    published = true;
    // Part objects an earlier append left under `to` stay hidden behind the plain object (see write.ts).
    ctx.appended.forget(from);
    const leftovers = stored.allParts.map((p) => p.key);
    if (stored.plain) leftovers.push(stored.plain.key);
    await deleteKeys(ctx, leftovers);
    published = false;
  } finally {
    // A source that could not be removed after publishing keeps its lock, so
    // that nothing appends to it; deleting the key clears both.
    if (!published) await lock.release();
  }
}

/** Write the bytes of `stored` to bucket key `target`, server-side where the store allows. */
async function publish(ctx: S3Context, stored: Stored, target: string): Promise<void> {
  if (stored.plain) {
    await copyObject(ctx, stored.plain.key, stored.plain.size, target, stored.plain.etag);
    return;
  }
  const tasks = planAssembly(stored.parts);
  const first = tasks[0]!;
  if (tasks.length === 1 && first.kind === "copy") {
    await copyObject(ctx, first.source, stored.parts[0]!.size, target, first.etag);
  } else if (tasks.length === 1 && first.kind === "merge") {
    const response = await ctx.client.send({ op: "move", method: "PUT", key: target, body: mergedBody(ctx, first.sources, first.length) });
    void response.body?.cancel();
  } else {
    await assemble(ctx, target, tasks);
  }
}
