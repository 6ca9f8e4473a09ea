/**
 * Path parsing for `/v2/`. Repository names contain `/`, so the route is
 * recognised from the right: `/v2/<name>/(manifests|blobs|tags|referrers)/…`.
 * Names, digests and upload ids are validated here, before authorization, so
 * malformed input never reaches the access policy or storage; so are tags, but
 * an invalid one is answered by the manifest handlers, after authorization.
 *
 * @module
 */
import { parseDigest, type Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { assertName, parseReference, type Reference } from "./names.js";

/** A recognised `/v2/` route. */
export type Route =
  | { kind: "base" }
  | { kind: "catalog" }
  | { kind: "tags"; name: string }
  | { kind: "manifest"; name: string; reference: Reference }
  | { kind: "blob"; name: string; digest: Digest }
  | { kind: "uploads"; name: string }
  | { kind: "upload"; name: string; uuid: string }
  | { kind: "referrers"; name: string; digest: Digest };

// Upload ids are minted by this registry (random UUIDs).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Parse a request path. Returns `undefined` when no route matches; throws a
 * {@link RegistryError} (NAME_INVALID, DIGEST_INVALID, BLOB_UPLOAD_UNKNOWN)
 * when a route matches but a part of it is malformed. A manifest reference
 * that is not a valid tag is kept as an `invalidTag`: what it gets depends on
 * the method (see {@link Reference}).
 */
export function parseRoute(pathname: string): Route | undefined {
  if (pathname === "/v2" || pathname === "/v2/") return { kind: "base" };
  if (!pathname.startsWith("/v2/")) return undefined;
  if (pathname === "/v2/_catalog") return { kind: "catalog" };
  const parts = pathname.slice(4).split("/");
  const n = parts.length;
  const at = (i: number) => parts[n + i] ?? "";
  const nameOf = (drop: number) => {
    const name = parts.slice(0, n - drop).join("/");
    assertName(name);
    return name;
  };

  if (n >= 3 && at(-2) === "tags" && at(-1) === "list") return { kind: "tags", name: nameOf(2) };
  if (n >= 3 && at(-2) === "blobs" && at(-1) === "uploads") return { kind: "uploads", name: nameOf(2) };
  if (n >= 4 && at(-3) === "blobs" && at(-2) === "uploads") {
    if (at(-1) === "") return { kind: "uploads", name: nameOf(3) };
    const name = nameOf(3);
    if (!UUID.test(at(-1))) throw new RegistryError("BLOB_UPLOAD_UNKNOWN", "blob upload unknown");
    return { kind: "upload", name, uuid: at(-1) };
  }
  if (n >= 3 && at(-2) === "manifests") {
    const name = nameOf(2);
    return { kind: "manifest", name, reference: parseReference(at(-1)) };
  }
  if (n >= 3 && at(-2) === "blobs") {
    const name = nameOf(2);
    return { kind: "blob", name, digest: parseDigest(at(-1)) };
  }
  if (n >= 3 && at(-2) === "referrers") {
    const name = nameOf(2);
    return { kind: "referrers", name, digest: parseDigest(at(-1)) };
  }
  return undefined;
}

// Segments of a base path: characters a URL keeps as they are in a path (RFC 3986 pchar without `%`).
const BASE_SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/;

/**
 * Check `createRegistry`'s `basePath` and return it without trailing slashes:
 * `""` for none (also for `""` and `"/"`), else `/a` or `/a/b`. Throws a `TypeError`
 * naming the value when it does not start with `/`, has an empty, `.` or `..`
 * segment, or a character a URL would encode.
 */
export function normalizeBasePath(basePath: string | undefined): string {
  const trimmed = (basePath ?? "").replace(/\/+$/, "");
  if (trimmed === "") return "";
  const segments = trimmed.split("/");
  const ok = segments[0] === "" && segments.slice(1).every((s) => BASE_SEGMENT.test(s) && s !== "." && s !== "..");
  if (!ok) {
    throw new TypeError(`basePath must be a path such as "/registry" (segments of letters, digits and -._~!$&'()*+,;=:@), got ${JSON.stringify(basePath)}`);
  }
  return trimmed;
}

/** `pathname` with `base` taken off (`/v2/…`), or `undefined` when it is not under `base`. */
export function underBase(pathname: string, base: string): string | undefined {
  if (base === "") return pathname;
  return pathname.startsWith(base) && pathname.charCodeAt(base.length) === 47 /* "/" */ ? pathname.slice(base.length) : undefined;
}
