/**
 * The driver's `redirectURL`: a service SAS URL (read-only, for one blob,
 * signed with the account key) so that a client fetches blob bytes from the
 * store rather than through the registry.
 *
 * @module
 */
import { DEFAULT_REDIRECT_SECONDS, type RedirectOptions } from "../driver.js";
import { API_VERSION, type AzureClient } from "./client.js";
import type { AzureContext } from "./context.js";

/** The longest lifetime handed out, as for S3's presigned URLs (7 days). */
export const MAX_SAS_SECONDS = 7 * 24 * 3600;

/** A SAS GET URL of `key`, or `undefined` when there is no such blob (one HEAD checks). */
export async function redirectURL(ctx: AzureContext, key: string, options?: RedirectOptions): Promise<string | undefined> {
  const blob = ctx.names.blob(key);
  const head = await ctx.client.send({ op: "redirect", method: "HEAD", blob, accept: [404] });
  if (head.status !== 200) return undefined;
  const seconds = Math.min(options?.expiresInSeconds ?? DEFAULT_REDIRECT_SECONDS, MAX_SAS_SECONDS);
  return sasURL(ctx.client, blob, new Date(Date.now() + seconds * 1000));
}

/** A read-only service SAS URL of `blob`, valid until `expiry` (version 2020-12-06 and later string-to-sign). */
export async function sasURL(client: AzureClient, blob: string, expiry: Date): Promise<string> {
  const se = expiry.toISOString().replace(/\.\d{3}Z$/, "Z");
  const url = client.url(blob);
  const resource = `/blob/${client.account}/${client.container}/${blob}`;
  // sp, st, se, resource, si, sip, spr, sv, sr, snapshot time, ses, rscc, rscd, rsce, rscl, rsct
  const toSign = ["r", "", se, resource, "", "", "", API_VERSION, "b", "", "", "", "", "", "", ""].join("\n");
  const sig = await client.sign(toSign);
  url.search = new URLSearchParams({ sv: API_VERSION, se, sr: "b", sp: "r", sig }).toString();
  return url.href;
}
