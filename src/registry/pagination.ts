/**
 * `?n=&last=` paging of tags/list and _catalog, and the `Link` header. The
 * page size is capped by `limits.listEntries`; nothing is allocated by `n`.
 *
 * @module
 */
import { RegistryError } from "../oci/errors.js";

/** A validated page request. */
export interface PageRequest {
  /** Entries wanted (0 … limit). */
  n: number;
  /** Return entries strictly after this one. */
  last: string | undefined;
}

/** Read `n` and `last`; `n` defaults to the limit. Throws `PAGINATION_NUMBER_INVALID`. */
export function pageRequest(url: URL, limit: number): PageRequest {
  const raw = url.searchParams.get("n");
  let n = limit;
  if (raw !== null && raw !== "") {
    if (!/^\d{1,15}$/.test(raw)) throw new RegistryError("PAGINATION_NUMBER_INVALID", "n must be a non-negative integer", 400, { n: raw.slice(0, 50) });
    n = Number(raw);
    if (n > limit) throw new RegistryError("PAGINATION_NUMBER_INVALID", `n must not exceed ${limit}`, 400, { n, limit });
  }
  const last = url.searchParams.get("last");
  return { n, last: last === null || last === "" ? undefined : last };
}

/** `Link: <path?n=&last=>; rel="next"`, as Distribution writes it. */
export function nextLink(path: string, n: number, last: string): string {
  return `<${path}?n=${n}&last=${encodeURIComponent(last)}>; rel="next"`;
}
