/**
 * The state every operation of the S3 driver works over, built once by
 * `s3Storage` from its options. Plain data: the modules beside this one are
 * functions of it.
 *
 * @module
 */
import type { BufferBudget } from "./budget.js";
import type { S3Client } from "./client.js";
import type { KeyLayout } from "./keys.js";
import type { RecentAppends } from "./recent-appends.js";

/** What one S3 driver instance knows: where its objects are and how to talk to the store. */
export interface S3Context {
  /** Signed requests with retries, against the driver's bucket. */
  readonly client: S3Client;
  /** Bucket keys under the driver's `rootDirectory`. */
  readonly keys: KeyLayout;
  /** Multipart part size in bytes (also the buffer size of a write). */
  readonly partSize: number;
  /** Parts uploaded in parallel by one write or append. */
  readonly concurrency: number;
  /** Parts copied (or merged) in parallel by one move's assembly. */
  readonly copyConcurrency: number;
  /** Sign payload hashes instead of `UNSIGNED-PAYLOAD`. */
  readonly signPayload: boolean;
  /** How often a GET body resumes after a failed connection. */
  readonly maxRetries: number;
  /** The part buffers every write and append of this driver share. */
  readonly budget: BufferBudget;
  /** Keys appended to lately: their `stat` starts with the listing. */
  readonly appended: RecentAppends;
}
