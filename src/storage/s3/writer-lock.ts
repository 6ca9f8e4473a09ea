/**
 * The writer lock of the S3 driver: "one writer, a final move" (see
 * `StorageDriver` in `../driver.ts`) across every process that shares a bucket.
 *
 * An `append` to a key and a `move` of it first create the lock object
 * `<key>!writer` with `PUT If-None-Match: *` and delete it when done, failed or
 * not. While it exists, another append or move of the key gets `412` and fails
 * with `conflict` (an append without an expected size waits a while instead).
 * `!` is in no key, so the lock never collides with a key; `writer` is not 16
 * digits, so it is never taken for a part object `<key>!<offset>`; and it sorts
 * after them, so a key's listing is its plain object, its part objects, its lock.
 *
 * The lock body names the operation, the time it was taken and a random id: a
 * PUT that was retried after a lost answer and then gets `412` recognises its
 * own lock by reading it back. The holder keeps the ETag the store gave its lock
 * (not computed: with SSE-KMS ETags are no MD5s), so that an append can tell
 * from a listing whether the lock is still its own (`delete` removes locks too).
 *
 * A process that dies while holding a lock leaves it behind: the key then refuses
 * appends and moves until it is deleted (`delete` and `deletePrefix` remove lock
 * objects too; the registry removes abandoned uploads by age). Locks never expire
 * by age: a legitimate append may stream for a long time.
 *
 * Cost: one PUT and one DELETE per append or move; a GET more when the PUT is
 * refused.
 *
 * @module
 */
import { toHex, utf8 } from "../../util/bytes.js";
import { StorageError } from "../driver.js";
import { sleep, type S3Client } from "./client.js";

/** What follows a key in the name of its lock object. */
export const WRITER_SUFFIX = "!writer";

/** How long an append without an expected size waits for another writer, in ms. */
const WAIT_MS = 10_000;
const WAIT_FIRST_MS = 20;
const WAIT_MAX_MS = 1_000;

/** Whether a bucket key is a writer-lock object. */
export function isWriterLock(rawKey: string): boolean {
  return rawKey.endsWith(WRITER_SUFFIX);
}

/** A writer lock held by this process. */
export interface WriterLock {
  /** The lock object's ETag (no quotes), as the store gave it: is a listed lock still ours? */
  readonly etag: string;
  /** Delete the lock object (best effort: a lock that cannot be deleted acts like a crashed writer's). */
  release(): Promise<void>;
}

/**
 * Become the one writer of the object at `rawKey` (a bucket key): create its
 * lock object. Throws `conflict` when another writer holds it; with `wait`,
 * first retries with backoff for up to 10 s.
 */
export async function acquireWriter(
  client: S3Client,
  rawKey: string,
  op: "append" | "move",
  options: { wait?: boolean; signal?: AbortSignal | undefined } = {},
): Promise<WriterLock> {
  const lockKey = rawKey + WRITER_SUFFIX;
  const text = JSON.stringify({ op, since: new Date().toISOString(), id: randomId() });
  const body = utf8(text);
  const release = async (): Promise<void> => {
    await client.send({ op, method: "DELETE", key: lockKey, accept: [404] }).then(
      (response) => response.body?.cancel(),
      () => {},
    );
  };
  /** The lock object's ETag if it is ours, `false` if another's, `undefined` when there is none. */
  const ours = async (): Promise<string | false | undefined> => {
    const response = await client.send({ op, method: "GET", key: lockKey, accept: [404] });
    if (response.status !== 200) {
      await response.body?.cancel();
      return undefined;
    }
    return (await response.text()) === text ? unquote(response.headers.get("etag")) : false;
  };
  const lock = (etag: string): WriterLock => ({ etag, release });
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw new StorageError("aborted", `${op} aborted`, { cause: options.signal.reason });
    let put: Response;
    try {
      // No signal: an abort mid-request could leave a lock that nobody releases.
      put = await client.send({ op, method: "PUT", key: lockKey, body, headers: { "if-none-match": "*" }, accept: [412] });
      void put.body?.cancel();
    } catch (error) {
      // Given up after retries: one of them may have created the lock.
      if (typeof (await ours().catch(() => false)) === "string") await release();
      throw error;
    }
    if (put.status !== 412) {
      const etag = unquote(put.headers.get("etag"));
      return lock(etag || ((await ours()) || ""));
    }
    // A retried PUT whose first attempt landed meets its own lock.
    const mine = await ours();
    if (mine !== false && mine !== undefined) return lock(mine);
    // Released between our PUT and GET: try again at once.
    if (mine === undefined && attempt < 5) continue;
    if (!options.wait || Date.now() >= deadline) {
      throw new StorageError("conflict", `s3 ${op}: another append or move of this object is in progress (or a crashed process left ${JSON.stringify(lockKey)})`);
    }
    await sleep(Math.min(WAIT_MAX_MS, WAIT_FIRST_MS * 2 ** attempt) * (0.5 + Math.random() / 2), options.signal);
  }
}

function unquote(etag: string | null): string {
  return (etag ?? "").replace(/"/g, "");
}

function randomId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return toHex(bytes);
}
