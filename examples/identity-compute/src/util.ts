/**
 * Small helpers shared by the identity, compute and image services of the
 * example: ids, random strings, timestamps and path matching. Runtime-neutral
 * (WebCrypto and `@noble/hashes` only).
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { base64url } from "rfc4648";

/** A fetch handler, the shape of every service in registry-kit. */
export type Handler = (request: Request) => Promise<Response>;

/**
 * A deterministic 32-hex-digit id (keystone's id format) derived from the
 * given parts, so that the same catalog or user always gets the same id.
 */
export function stableId(...parts: string[]): string {
  return bytesToHex(sha256(utf8ToBytes(parts.join("\u0000")))).slice(0, 32);
}

/** `bytes` random bytes as unpadded base64url. */
export function randomString(bytes: number): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return base64url.stringify(buf, { pad: false });
}

/**
 * A timestamp in the format keystone writes (`2024-05-01T12:00:00.000000Z`):
 * ISO 8601 in UTC with microseconds.
 */
export function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** A timestamp in the format nova and glance write (`2024-05-01T12:00:00Z`). */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Normalise a mount path: `""`, `"/"` → `""`; `"/identity/"` → `"/identity"`.
 * Throws on a path that does not start with `/`.
 */
export function normaliseRoot(root: string | undefined): string {
  if (root === undefined || root === "" || root === "/") return "";
  if (!root.startsWith("/")) throw new TypeError(`a service root must start with "/": ${JSON.stringify(root)}`);
  return root.replace(/\/+$/, "");
}

/**
 * The request path below `root`, always starting with `/` (`"/"` for the root
 * itself), or `undefined` when the request is not under `root`. Repeated and
 * trailing slashes are dropped, so `/v3/` and `/v3` are the same route.
 */
export function pathBelow(url: URL, root: string): string | undefined {
  const path = url.pathname;
  let rest: string;
  if (root === "") rest = path;
  else if (path === root) rest = "/";
  else if (path.startsWith(root + "/")) rest = path.slice(root.length);
  else return undefined;
  const cleaned = "/" + rest.split("/").filter((s) => s !== "").join("/");
  return cleaned;
}

/**
 * The absolute base URL of a service: `publicUrl` when configured, else the
 * request's origin followed by `root`. No trailing slash.
 */
export function baseUrl(request: Request, root: string, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl.replace(/\/+$/, "");
  return new URL(request.url).origin + root;
}
