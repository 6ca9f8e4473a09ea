/**
 * The writer lock: "one writer, a final move" (`StorageDriver` in
 * `../driver.ts`) across every Worker and isolate that shares the bucket.
 *
 * An `append` to a key and a `move` of it first create `<key>!writer` with
 * `If-None-Match: *` (R2 answers `null` when it exists) and delete it when
 * done, failed or not. While it exists, another append or move of the key
 * fails with `conflict` (an append without an expected size waits up to 10 s
 * first). R2 is strongly consistent, so a lock one Worker created is seen by
 * all. The lock holds the operation, the time and a random id, and the holder
 * keeps its ETag: an append checks at the end that the lock is still its own
 * (a `delete` of the key removes locks too).
 *
 * An isolate that dies while holding a lock leaves it behind: the key then
 * refuses appends and moves until it is deleted (the registry removes
 * abandoned uploads with `deletePrefix`, which removes locks too). Locks never
 * expire by age: a legitimate append may stream for a long time.
 *
 * @module
 */
import { toHex } from "../../util/bytes.js";
import { StorageError } from "../driver.js";
import { call, MARK, type R2Context } from "./context.js";

const WAIT_MS = 10_000;
const WAIT_FIRST_MS = 20;
const WAIT_MAX_MS = 1_000;

/** The bucket key of the writer lock of the bucket key `base`. */
export function lockKey(base: string): string {
  return base + MARK + "writer";
}

/** A writer lock this driver holds. */
export interface WriterLock {
  /** The lock object's ETag: is the lock found later still ours? */
  readonly etag: string;
  /** Delete the lock (best effort: one that cannot be deleted acts like a crashed writer's). */
  release(): Promise<void>;
}

/** Become the one writer of the bucket key `base`, or throw `conflict` (after waiting, with `wait`). */
export async function acquireWriter(
  ctx: R2Context,
  base: string,
  op: "append" | "move",
  options: { wait?: boolean; signal?: AbortSignal | undefined } = {},
): Promise<WriterLock> {
  const key = lockKey(base);
  const body = JSON.stringify({ op, since: new Date().toISOString(), id: randomId() });
  const deadline = Date.now() + (options.wait ? WAIT_MS : 0);
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw new StorageError("aborted", `${op} aborted`, { cause: options.signal.reason });
    const put = await call("put", () => ctx.bucket.put(key, body, { onlyIf: new Headers({ "if-none-match": "*" }) }));
    if (put) {
      const release = async (): Promise<void> => {
        await ctx.bucket.delete(key).catch(() => {});
      };
      return { etag: put.etag, release };
    }
    if (Date.now() >= deadline) {
      throw new StorageError("conflict", `r2 ${op}: another append or move of this object is in progress (or a crashed writer left ${JSON.stringify(key)})`);
    }
    await sleep(Math.min(WAIT_MAX_MS, WAIT_FIRST_MS * 2 ** attempt) * (0.5 + Math.random() / 2));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function randomId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}
