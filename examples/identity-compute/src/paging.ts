/**
 * Nova's list paging, shared by the server and flavor lists: `marker` (the id
 * after which the page starts; 400 when unknown) and `limit` (capped at the
 * service's maximum), and the id of the last item when more follow.
 */
import { ComputeError } from "./errors.js";

/** One page of `list` (already filtered and sorted) for the query `q`. */
export function pageByMarker<T extends { id: string }>(list: T[], q: URLSearchParams, maxLimit: number): { page: T[]; next: string | undefined } {
  const marker = q.get("marker");
  if (marker !== null) {
    const i = list.findIndex((item) => item.id === marker);
    if (i < 0) throw new ComputeError(400, `marker [${marker.slice(0, 64)}] not found`);
    list = list.slice(i + 1);
  }
  let limit = maxLimit;
  const limitText = q.get("limit");
  if (limitText !== null) {
    if (!/^\d{1,9}$/.test(limitText)) throw new ComputeError(400, "limit param must be an integer");
    limit = Math.min(Number(limitText), maxLimit);
  }
  const page = list.slice(0, limit);
  const next = list.length > limit && page.length > 0 ? page[page.length - 1]!.id : undefined;
  return { page, next };
}
