/**
 * The `handler` label of a `/v2/` request in the HTTP metrics: Distribution's
 * route names (`base`, `catalog`, `tags`, `manifest`, `blob`, `blob_upload`,
 * `blob_upload_chunk`), plus `referrers`, which Distribution 2.8 lacks, and
 * `other` for a path that is no route. Worked out from the path's last
 * segments without validating names or digests (the router does that), so
 * it costs no allocation beyond the pathname.
 *
 * @module
 */

/** The `handler` label of `pathname` (see the module comment). */
export function registryRouteLabel(pathname: string): string {
  if (pathname === "/v2" || pathname === "/v2/") return "base";
  if (!pathname.startsWith("/v2/")) return "other";
  if (pathname === "/v2/_catalog") return "catalog";
  if (pathname.endsWith("/tags/list")) return "tags";
  if (pathname.endsWith("/blobs/uploads") || pathname.endsWith("/blobs/uploads/")) return "blob_upload";
  const last = pathname.lastIndexOf("/");
  const before = pathname.lastIndexOf("/", last - 1);
  const segment = pathname.slice(before + 1, last);
  if (segment === "manifests") return "manifest";
  if (segment === "blobs") return "blob";
  if (segment === "referrers") return "referrers";
  if (segment === "uploads" && pathname.lastIndexOf("/blobs/uploads/") === before - "/blobs".length) return "blob_upload_chunk";
  return "other";
}
