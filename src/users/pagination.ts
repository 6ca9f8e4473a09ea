/**
 * `page` / `page_size` query parameters and the `Link` and `X-Total-Count`
 * headers of the user list.
 *
 * @module
 */
import { fail } from "./errors.js";

/** Page size when `page_size` is absent, and the largest accepted. */
export const PAGE_SIZE = { default: 10, max: 100 } as const;

/** A requested page: 1-based number and size. */
export interface PageRequest {
  page: number;
  pageSize: number;
}

/** Read `page` (≥ 1, default 1) and `page_size` (1 … `maxPageSize`, default 10 or `maxPageSize` if smaller); 400 otherwise. */
export function readPage(params: URLSearchParams, maxPageSize: number = PAGE_SIZE.max): PageRequest {
  return {
    page: positive(params.get("page"), "page", 1, 1_000_000_000),
    pageSize: positive(params.get("page_size"), "page_size", Math.min(PAGE_SIZE.default, maxPageSize), maxPageSize),
  };
}

function positive(value: string | null, field: string, fallback: number, max: number): number {
  if (value === null) return fallback;
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw fail.badRequest(`${field} must be an integer from 1 to ${max}`, field);
  }
  return Number(value);
}

/**
 * The paging headers: `X-Total-Count`, and `Link` with `rel="prev"` and/or
 * `rel="next"` (path and query only, every other query parameter kept).
 */
export function pageHeaders(url: URL, { page, pageSize }: PageRequest, total: number): Headers {
  const headers = new Headers({ "x-total-count": String(total) });
  const link = (n: number, rel: string) => {
    const params = new URLSearchParams(url.searchParams);
    params.set("page", String(n));
    params.set("page_size", String(pageSize));
    return `<${url.pathname}?${params.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  const last = Math.max(1, Math.ceil(total / pageSize));
  if (page > 1) links.push(link(Math.min(page - 1, last), "prev"));
  if (page * pageSize < total) links.push(link(page + 1, "next"));
  if (links.length > 0) headers.set("link", links.join(", "));
  return headers;
}
