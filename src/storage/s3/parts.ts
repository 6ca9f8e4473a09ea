/**
 * What is stored under one key: a plain object, the part objects of an
 * append, and the writer lock, found by listing.
 *
 * @module
 */
import { contiguousParts } from "../parts.js";
import type { S3Context } from "./context.js";
import { PART_MARK, partOffset } from "./keys.js";
import { listAll, type RawEntry } from "./list.js";
import { WRITER_SUFFIX } from "./writer-lock.js";

/** A part object of an appended object. */
export interface PartObject {
  key: string;
  offset: number;
  size: number;
  modified: Date;
  etag: string;
}

/** The part objects of a key: the contiguous run from offset 0 and its size, and every one found. */
export interface PartListing {
  /** Contiguous part objects from offset 0, in order. */
  parts: PartObject[];
  /** The size of the contiguous run: the appended object's size. */
  partsSize: number;
  /** Every part object found, contiguous or not. */
  allParts: PartObject[];
}

/** What is stored under one key: a plain object and/or the part objects of an append. */
export interface Stored extends PartListing {
  plain?: RawEntry | undefined;
  /** The writer-lock object, if there is one. */
  lock?: RawEntry | undefined;
}

/** The plain object, part objects and writer lock stored for a key, in one listing (they sort first under the key). */
export async function inspect(ctx: S3Context, key: string): Promise<Stored> {
  const base = ctx.keys.objectKey(key);
  let plain: RawEntry | undefined;
  let lock: RawEntry | undefined;
  const allParts: PartObject[] = [];
  for await (const entry of listAll(ctx, base, undefined, 100)) {
    if (entry.key === base) plain = entry;
    else if (entry.key.startsWith(base + PART_MARK)) {
      const offset = partOffset(entry.key.slice(base.length + 1));
      if (offset !== undefined) allParts.push({ ...entry, offset });
      else if (entry.key === base + WRITER_SUFFIX) lock = entry;
    } else break;
  }
  return { plain, ...contiguousParts(allParts), allParts, lock };
}

/** The part objects of `key` alone (no plain object, no lock). */
export async function listParts(ctx: S3Context, key: string): Promise<PartListing> {
  const prefix = ctx.keys.objectKey(key) + PART_MARK;
  const allParts: PartObject[] = [];
  for await (const entry of listAll(ctx, prefix)) {
    const offset = partOffset(entry.key.slice(prefix.length));
    if (offset !== undefined) allParts.push({ ...entry, offset });
  }
  return { ...contiguousParts(allParts), allParts };
}

