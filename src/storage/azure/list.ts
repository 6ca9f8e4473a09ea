/**
 * Listing: List Blobs pages, and the driver's `list`.
 *
 * List Blobs can continue only from the opaque marker of the page before; it
 * cannot start after an arbitrary name. So a page whose `after` is the last key
 * of a page this driver served continues from that page's remembered marker
 * (one request, however deep the listing); any other `after` is found by
 * reading the prefix from its beginning, 5,000 names a request.
 *
 * @module
 */
import { StorageError, type ListOptions, type ListPage, type ObjectInfo } from "../driver.js";
import { child, children, childText, parseXml } from "../s3/xml.js";
import type { AzureContext } from "./context.js";

/** One blob of a List Blobs page. */
export interface ListedBlob {
  name: string;
  size: number;
  modified: Date;
}

/** The most names one List Blobs request may ask for. */
const MAX_RESULTS = 5000;

/** One List Blobs page of blob names under `prefix`, from `marker`. */
export async function listPage(ctx: AzureContext, prefix: string, marker: string | undefined, maxResults = MAX_RESULTS): Promise<{ blobs: ListedBlob[]; next?: string | undefined }> {
  const response = await ctx.client.send({
    op: "list",
    method: "GET",
    query: { restype: "container", comp: "list", prefix, marker, maxresults: maxResults },
  });
  const root = parseXml(await response.text());
  const blobs = children(child(root, "Blobs") ?? root, "Blob").map((b) => {
    const properties = child(b, "Properties");
    return {
      name: childText(b, "Name") ?? "",
      size: Number((properties && childText(properties, "Content-Length")) ?? "0"),
      modified: new Date((properties && childText(properties, "Last-Modified")) ?? 0),
    };
  });
  const next = childText(root, "NextMarker") || undefined;
  if (blobs.some((b) => !b.name.startsWith(prefix))) throw new StorageError("io", "azure list: the service answered names outside the prefix");
  return { blobs, next };
}

/** Every blob under `prefix`, page by page. */
export async function* listAll(ctx: AzureContext, prefix: string): AsyncGenerator<ListedBlob> {
  let marker: string | undefined;
  do {
    const page = await listPage(ctx, prefix, marker);
    yield* page.blobs;
    marker = page.next;
  } while (marker);
}

/**
 * The driver's `list`: keys under `prefix/` after `after`, at most `limit`.
 * A page asks the service for exactly the keys it still needs, so when it
 * fills up at the end of a service page, that page's marker continues the
 * listing and is remembered; `truncated` is the service's word that more
 * follow. With `info`, every key's size and time come from the listing.
 */
export async function list(ctx: AzureContext, prefix: string, options?: ListOptions): Promise<ListPage> {
  const { names } = ctx;
  const limit = options?.limit ?? Infinity;
  const blobPrefix = names.blob(prefix) + "/";
  const afterName = options?.after === undefined ? undefined : names.blob(options.after);
  let marker = afterName === undefined ? undefined : names.marker(blobPrefix, afterName);
  const keys: string[] = [];
  const info: ObjectInfo[] = [];
  for (;;) {
    const wanted = limit === Infinity ? MAX_RESULTS : Math.max(1, Math.min(MAX_RESULTS, limit - keys.length));
    const page = await listPage(ctx, blobPrefix, marker, wanted);
    for (const blob of page.blobs) {
      if (afterName !== undefined && blob.name <= afterName) continue;
      if (keys.length >= limit) return finish(keys, info, true, options);
      keys.push(names.key(blob.name));
      info.push({ size: blob.size, modified: blob.modified });
    }
    if (page.next === undefined) return finish(keys, info, false, options);
    marker = page.next;
    if (keys.length >= limit) {
      // The page ended exactly at the last key given: its marker continues after it.
      names.rememberMarker(blobPrefix, names.blob(keys[keys.length - 1]!), marker);
      return finish(keys, info, true, options);
    }
  }
}

function finish(keys: string[], info: ObjectInfo[], truncated: boolean, options?: ListOptions): ListPage {
  return options?.info ? { keys, truncated, info } : { keys, truncated };
}
