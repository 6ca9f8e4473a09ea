/**
 * Deleting: batches of bucket keys (DeleteObjects), the part objects of a
 * key, and the driver's `delete` and `deletePrefix`, ordered so that an
 * append in progress never brings a deleted object back (see `append.ts`).
 *
 * @module
 */
import { md5 } from "@noble/hashes/legacy.js";
import { b64, utf8 } from "../../util/bytes.js";
import { StorageError } from "../driver.js";
import type { S3Context } from "./context.js";
import { PART_MARK, partOffset } from "./keys.js";
import { listAll } from "./list.js";
import { isWriterLock, WRITER_SUFFIX } from "./writer-lock.js";
import { children, childText, escapeXml } from "./xml.js";

/** The most keys one DeleteObjects request may name. */
const DELETE_BATCH = 1000;

/** Delete bucket keys, a DeleteObjects request per 1000 (a plain DELETE for one); missing keys are fine. */
export async function deleteKeys(ctx: S3Context, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETE_BATCH) {
    const batch = keys.slice(i, i + DELETE_BATCH);
    if (batch.length === 1) {
      await ctx.client.send({ op: "delete", method: "DELETE", key: batch[0]!, accept: [404] });
      continue;
    }
    const xml = `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${batch.map((k) => `<Object><Key>${escapeXml(k)}</Key></Object>`).join("")}</Delete>`;
    const bytes = utf8(xml);
    const result = await ctx.client.sendXml({
      op: "delete",
      method: "POST",
      query: { delete: "" },
      headers: { "content-md5": b64(md5(bytes)), "content-type": "application/xml" },
      body: bytes,
    });
    const failed = children(result, "Error").filter((e) => childText(e, "Code") !== "NoSuchKey");
    if (failed.length > 0) {
      const first = failed[0]!;
      throw new StorageError("io", `s3 delete: ${failed.length} objects not deleted (${childText(first, "Code")} on ${JSON.stringify(childText(first, "Key"))})`);
    }
  }
}

/** Delete the part objects of `key`; with `lock`, its writer lock too (and anything else under `<key>!`). */
export async function deleteParts(ctx: S3Context, key: string, lock = false): Promise<void> {
  const prefix = ctx.keys.objectKey(key) + PART_MARK;
  const keys: string[] = [];
  for await (const entry of listAll(ctx, prefix)) {
    if (lock || partOffset(entry.key.slice(prefix.length)) !== undefined) keys.push(entry.key);
  }
  if (keys.length > 0) await deleteKeys(ctx, keys);
}

/** The driver's `delete`: the writer lock, the plain object, then the part objects. */
export async function deleteObject(ctx: S3Context, key: string): Promise<void> {
  // The lock first and the part objects last: an append in progress then either
  // finds its lock or the object gone when it checks (and takes its parts back), or
  // claimed its parts before the listing here (see append).
  const rawKey = ctx.keys.objectKey(key);
  ctx.appended.forget(key);
  for (const target of [rawKey + WRITER_SUFFIX, rawKey]) {
    const response = await ctx.client.send({ op: "delete", method: "DELETE", key: target, accept: [404] });
    void response.body?.cancel();
  }
  await deleteParts(ctx, key, true);
}

/** The driver's `deletePrefix`: every bucket key under `prefix/`. */
export async function deletePrefix(ctx: S3Context, prefix: string): Promise<void> {
  // With writer locks among the objects, appends were (or seemed) in progress: once
  // the locks are gone, list again for parts claimed before those appends checked
  // their lock (see append).
  for (let pass = 0; pass < 2; pass++) {
    let locks = 0;
    const batch: string[] = [];
    for await (const entry of listAll(ctx, ctx.keys.objectKey(prefix) + "/")) {
      if (isWriterLock(entry.key)) locks++;
      batch.push(entry.key);
      if (batch.length === DELETE_BATCH) await deleteKeys(ctx, batch.splice(0));
    }
    if (batch.length > 0) await deleteKeys(ctx, batch);
    if (locks === 0) break;
  }
}
