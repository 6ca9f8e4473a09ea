/**
 * The driver's `redirectURL`: a SigV4 presigned GET URL of a plain object, so
 * that a client fetches blob bytes from the store rather than through the
 * registry.
 *
 * @module
 */
import { DEFAULT_REDIRECT_SECONDS, type RedirectOptions } from "../driver.js";
import type { S3Context } from "./context.js";

/** The longest lifetime SigV4 allows for a presigned URL (7 days). */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * A presigned GET URL of `key`, or `undefined` when `key` is not a plain
 * object (missing, or an appended object still made of part objects, which
 * no single URL serves). One HEAD checks that; the URL itself is signed
 * locally.
 */
export async function redirectURL(ctx: S3Context, key: string, options?: RedirectOptions): Promise<string | undefined> {
  const rawKey = ctx.keys.objectKey(key);
  const head = await ctx.client.send({ op: "redirect", method: "HEAD", key: rawKey, accept: [404] });
  if (head.status !== 200) return undefined;
  const seconds = Math.min(options?.expiresInSeconds ?? DEFAULT_REDIRECT_SECONDS, MAX_PRESIGN_SECONDS);
  return ctx.client.presignGet(rawKey, seconds);
}
