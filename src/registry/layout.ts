/**
 * Every storage key the registry uses, in one place.
 *
 * ```
 * blobs/<alg>/<2 hex>/<hex>/data                          blob and manifest bytes, shared by all repositories
 * repositories/<name>/_layers/<alg>/<hex>                 a blob is linked into (visible in) <name>
 * repositories/<name>/_manifests/revisions/<alg>/<hex>    manifest metadata (JSON {@link ManifestMeta})
 * repositories/<name>/_manifests/tags/<tag>               the digest a tag points to
 * repositories/<name>/_referrers/<alg>/<hex>/<digest>     descriptor of a manifest whose subject is <alg>:<hex>
 * repositories/<name>/_uploads/<uuid>/data                bytes of an upload in progress
 * uploads/callers/<sha256 of caller>/<uuid>                one per open upload (its repository name), for the per-caller limits and the sweep
 * uploads/callers/anonymous/<uuid>                        the same, for uploads of anonymous callers
 * catalog/<hex of name>                                   one marker per repository, for /v2/_catalog (split every 254 hex digits)
 * quarantine/<alg>/<hex>/<stamp>/data                     bytes of a blob that did not hash to its name, moved aside by verify
 * quarantine/<alg>/<hex>/<stamp>/info                     JSON {@link QuarantineInfo}: what verify found
 * ```
 *
 * Name components start with `[a-z0-9]`, so the `_`-prefixed segments can never
 * collide with a nested repository. Tags are single leaf segments so that a
 * listing comes back in tag order; catalog markers hex-encode the name into one
 * segment because hex keeps byte order (and prefixes first), which `/` inside
 * names would not.
 *
 * @module
 */
import type { Digest } from "../oci/digest.js";

/** Metadata stored beside each manifest revision. */
export interface ManifestMeta {
  mediaType: string;
  size: number;
  artifactType?: string;
  /** Digest of the manifest's `subject`, for cleaning up the referrers index. */
  subject?: string;
}

const repo = (name: string) => `repositories/${name}`;

/** Bytes of a blob or manifest. */
export const blobData = (d: Digest) => `blobs/${d.algorithm}/${d.hex.slice(0, 2)}/${d.hex}/data`;
/** Link making a blob visible in a repository. */
export const layerLink = (name: string, d: Digest) => `${repo(name)}/_layers/${d.algorithm}/${d.hex}`;
/** Manifest revision metadata in a repository. */
export const manifestRevision = (name: string, d: Digest) => `${repo(name)}/_manifests/revisions/${d.algorithm}/${d.hex}`;
/** Prefix under which every tag of a repository lives. */
export const tagsPrefix = (name: string) => `${repo(name)}/_manifests/tags`;
/** A tag's link. */
export const tagLink = (name: string, tag: string) => `${tagsPrefix(name)}/${tag}`;
/** Prefix of the referrers of one subject. */
export const referrersPrefix = (name: string, subject: Digest) => `${repo(name)}/_referrers/${subject.algorithm}/${subject.hex}`;
/** One referrer's descriptor. */
export const referrer = (name: string, subject: Digest, manifest: Digest) => `${referrersPrefix(name, subject)}/${manifest.value}`;
/** Prefix of the upload sessions of a repository. */
export const uploadsPrefix = (name: string) => `${repo(name)}/_uploads`;
/** Folder of one upload session. */
export const uploadDir = (name: string, uuid: string) => `${uploadsPrefix(name)}/${uuid}`;
/** Bytes of one upload session. */
export const uploadData = (name: string, uuid: string) => `${uploadDir(name, uuid)}/data`;
/** Prefix of the index of open uploads (see upload-limits.ts). */
export const UPLOADS_INDEX = "uploads/callers";
/** Prefix of the open uploads of one caller: a SHA-256 hex, or `anonymous`. */
export const callerUploadsPrefix = (caller: string) => `${UPLOADS_INDEX}/${caller}`;
/** Index entry of one open upload of a caller; holds the repository name. */
export const callerUpload = (caller: string, uuid: string) => `${callerUploadsPrefix(caller)}/${uuid}`;

/**
 * Prefix of the blobs `verifyBlobs` (verify.ts) moved aside. No route reads under
 * it, so quarantined bytes are never served; they stay for an operator to
 * inspect (and delete).
 */
export const QUARANTINE_PREFIX = "quarantine";
/** Folder of one quarantined copy of a blob; `stamp` tells copies of one digest apart. */
export const quarantineDir = (d: Digest, stamp: string) => `${QUARANTINE_PREFIX}/${d.algorithm}/${d.hex}/${stamp}`;

/** What `quarantine/<alg>/<hex>/<stamp>/info` records beside the bytes. */
export interface QuarantineInfo {
  /** The digest the bytes were stored under. */
  digest: string;
  /** The digest the bytes actually have. */
  actualDigest: string;
  /** Size of the bytes in bytes. */
  size: number;
  /** The key they were moved from. */
  from: string;
  /** When they were moved, ISO 8601. */
  quarantinedAt: string;
}

/** Prefix of the repository index. */
export const CATALOG_PREFIX = "catalog";
/**
 * Hex characters per catalog key segment. A name of up to 255 characters is
 * 510 hex characters, more than one key segment may hold (255), so longer
 * markers are split every 254 hex characters and each non-final chunk ends in
 * `+`. The split points are fixed, `+` is the only non-hex character and comes
 * only there, so key order is still name order, and a marker file never has
 * the name of a directory of another marker (the fs driver needs that).
 */
const CATALOG_CHUNK = 254;
/** The repository index marker of `name`. */
export function catalogEntry(name: string): string {
  const hex = toHex(name);
  const chunks: string[] = [];
  for (let i = 0; i < hex.length; i += CATALOG_CHUNK) chunks.push(hex.slice(i, i + CATALOG_CHUNK));
  return `${CATALOG_PREFIX}/${chunks.join("+/")}`;
}
/** The repository name of a catalog marker key. */
export function catalogName(key: string): string {
  return fromHex(key.slice(CATALOG_PREFIX.length + 1).replaceAll("+/", ""));
}

// Names are ASCII (checked by the name grammar), so one byte per character.
function toHex(name: string): string {
  let out = "";
  for (let i = 0; i < name.length; i++) out += name.charCodeAt(i).toString(16).padStart(2, "0");
  return out;
}
function fromHex(hex: string): string {
  let out = "";
  for (let i = 0; i + 1 < hex.length; i += 2) out += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return out;
}
