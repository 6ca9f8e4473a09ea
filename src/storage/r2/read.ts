/**
 * Reading: what is stored under a key (a whole object, or the part objects of
 * an append), `stat`, and `read` with ranges, streamed part by part.
 *
 * @module
 */
import { StorageError, type ByteRange, type ObjectInfo } from "../driver.js";
import { contiguousParts } from "../parts.js";
import { concatStreams, emptyStream } from "../streams.js";
import type { R2ObjectInfo, R2ObjectWithBody } from "./bucket.js";
import { call, MARK, objectKey, partOffset, type R2Context } from "./context.js";
import { listRaw } from "./list.js";

/** A part object of an appended object. */
export interface Part extends R2ObjectInfo {
  offset: number;
}

/** What is stored under one key. A whole object wins over part objects. */
export interface Stored {
  whole?: R2ObjectInfo | undefined;
  /** The part objects contiguous from offset 0, in order. */
  parts: Part[];
  /** Every part object found (a leftover beyond a gap included). */
  allParts: Part[];
  /** The size of the contiguous part objects. */
  partsSize: number;
  /** The writer lock, if one is held. */
  lock?: R2ObjectInfo | undefined;
}

/** The whole object, part objects and lock of `key`. */
export async function inspect(ctx: R2Context, key: string): Promise<Stored> {
  const base = objectKey(ctx, key);
  const [whole, listed] = await Promise.all([call("head", () => ctx.bucket.head(base)), partsOf(ctx, key)]);
  return { whole: whole ?? undefined, ...listed };
}

/** The part objects and lock of `key` (one listing of `<key>!`). */
export async function partsOf(ctx: R2Context, key: string): Promise<Omit<Stored, "whole">> {
  const prefix = objectKey(ctx, key) + MARK;
  const allParts: Part[] = [];
  let lock: R2ObjectInfo | undefined;
  for await (const object of listRaw(ctx, prefix)) {
    const offset = partOffset(object.key.slice(prefix.length));
    if (offset !== undefined) allParts.push({ ...pick(object), offset });
    else lock = object;
  }
  allParts.sort((a, b) => a.offset - b.offset);
  return { ...contiguousParts(allParts), allParts, lock };
}

/** The driver's `stat`: one HEAD for a whole object, a listing more for an appended one. */
export async function stat(ctx: R2Context, key: string): Promise<ObjectInfo | undefined> {
  const whole = await call("head", () => ctx.bucket.head(objectKey(ctx, key)));
  if (whole) return { size: whole.size, modified: whole.uploaded };
  const { parts, partsSize } = await partsOf(ctx, key);
  if (parts.length === 0) return undefined;
  return { size: partsSize, modified: new Date(Math.max(...parts.map((p) => p.uploaded.getTime()))) };
}

/** The driver's `read`: a whole object by one GET (with `range`), an appended one part object by part object. */
export async function read(ctx: R2Context, key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
  const base = objectKey(ctx, key);
  if (!range) {
    const got = await call("get", () => ctx.bucket.get(base));
    if (got && "body" in got) return got.body;
  }
  const stored = await inspect(ctx, key);
  if (stored.whole) {
    const span = clip(range, stored.whole.size);
    if (span.length === 0) return emptyStream();
    // Pinned to the ETag just seen: a range of another object would be wrong bytes.
    const got = await call("get", () => ctx.bucket.get(base, { range: span, onlyIf: { etagMatches: stored.whole!.etag } }));
    if (got && "body" in got) return got.body;
    throw new StorageError("conflict", "the object changed while it was being read");
  }
  if (stored.parts.length === 0) return undefined;
  return partsStream(ctx, stored.parts, clip(range, stored.partsSize));
}

/** `range` within an object of `size` bytes (a range past the end is empty). */
function clip(range: ByteRange | undefined, size: number): { offset: number; length: number } {
  const offset = Math.min(range?.offset ?? 0, size);
  return { offset, length: Math.min(range?.length ?? Infinity, size - offset) };
}

/** The bytes `span` of the concatenated `parts`, fetched one part at a time as the reader pulls. */
export function partsStream(ctx: R2Context, parts: Part[], span: { offset: number; length: number }): ReadableStream<Uint8Array> {
  const end = span.offset + span.length;
  const wanted = parts.filter((p) => p.offset + p.size > span.offset && p.offset < end && p.size > 0);
  return concatStreams(wanted.map((part) => async () => {
    const from = Math.max(span.offset, part.offset) - part.offset;
    const to = Math.min(end, part.offset + part.size) - part.offset;
    const got = await call("get", () => ctx.bucket.get(part.key, { range: { offset: from, length: to - from }, onlyIf: { etagMatches: part.etag } }));
    if (!got || !("body" in got)) throw new StorageError("conflict", "a part of the object was deleted or replaced while it was being read");
    return (got as R2ObjectWithBody).body;
  }));
}

function pick(o: R2ObjectInfo): R2ObjectInfo {
  return { key: o.key, size: o.size, etag: o.etag, uploaded: o.uploaded };
}
