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
 * gc-trash/<alg>/<hex>                                    bytes GC moved aside and looks for once more before deleting them
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
import { tryParseDigest, type Digest } from "../../../oci/digest.js";
import { fromHex, fromUtf8, toHex, utf8 } from "../../../util/bytes.js";
import { isValidName, isValidTag } from "../../names.js";

/** Metadata stored beside each manifest revision. */
export interface ManifestMeta {
  mediaType: string;
  size: number;
  artifactType?: string;
  /** Digest of the manifest's `subject`, for cleaning up the referrers index. */
  subject?: string;
}

const repo = (name: string) => `repositories/${name}`;
/** The storage prefix holding every repository whose name starts with `namePrefix` (`""`, or components ending in `/`). */
export const repositoriesUnder = (namePrefix: string) => (namePrefix === "" ? "repositories" : repo(namePrefix.replace(/\/$/, "")));

/** Bytes of a blob or manifest. */
export const blobData = (d: Digest) => `blobs/${d.algorithm}/${d.hex.slice(0, 2)}/${d.hex}/data`;
/** Link making a blob visible in a repository. */
export const layerLink = (name: string, d: Digest) => `${repo(name)}/_layers/${d.algorithm}/${d.hex}`;
/** Prefix under which every manifest revision of a repository lives. */
export const revisionsPrefix = (name: string) => `${repo(name)}/_manifests/revisions`;
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
/** Bytes of one quarantined copy of a blob. */
export const quarantineData = (d: Digest, stamp: string) => `${quarantineDir(d, stamp)}/data`;
/** What verify found about one quarantined copy (JSON {@link QuarantineInfo}). */
export const quarantineInfo = (d: Digest, stamp: string) => `${quarantineDir(d, stamp)}/info`;

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

/**
 * Prefix of blob bytes garbage collection has moved aside and not yet deleted
 * (gc/sweep-blobs.ts): moved, then looked for once more, then deleted or moved
 * back. No route reads under it; a run that finds some left by a killed run
 * moves them back first.
 */
export const GC_TRASH_PREFIX = "gc-trash";
/** Where GC keeps the bytes of `d` between moving them aside and deleting them. */
export const trashedBlob = (d: Digest) => `${GC_TRASH_PREFIX}/${d.algorithm}/${d.hex}`;

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
  const hex = toHex(utf8(name));
  const chunks: string[] = [];
  for (let i = 0; i < hex.length; i += CATALOG_CHUNK) chunks.push(hex.slice(i, i + CATALOG_CHUNK));
  return `${CATALOG_PREFIX}/${chunks.join("+/")}`;
}

/**
 * The name a catalog marker's hex spells, or "" where it spells none. Names
 * are ASCII (the name grammar), so one byte a character; a byte above 0x7f
 * cannot be in a name, and is refused here rather than by the UTF-8 decoder.
 */
function catalogName(hex: string): string {
  if (!/^(?:[0-9a-f]{2})+$/.test(hex)) return "";
  const bytes = fromHex(hex);
  return bytes.every((b) => b < 0x80) ? fromUtf8(bytes) : "";
}

/**
 * What a storage key is, as {@link parseKey} reads it: one variant per key
 * builder above, named after it, with the parts the builder took. `unknown` is
 * any key the registry does not write (including the prefixes, which are not
 * keys of objects).
 */
export type ParsedKey =
  | { kind: "blobData"; digest: Digest }
  | { kind: "layerLink"; name: string; digest: Digest }
  | { kind: "manifestRevision"; name: string; digest: Digest }
  | { kind: "tagLink"; name: string; tag: string }
  | { kind: "referrer"; name: string; subject: Digest; manifest: Digest }
  | { kind: "uploadData"; name: string; uuid: string }
  | { kind: "callerUpload"; caller: string; uuid: string }
  | { kind: "catalogEntry"; name: string }
  | { kind: "quarantineData"; digest: Digest; stamp: string }
  | { kind: "quarantineInfo"; digest: Digest; stamp: string }
  | { kind: "unknown"; key: string };

// Upload ids are minted by the registry (random UUIDs; router.ts checks the same form).
const UPLOAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// A caller is the SHA-256 hex of its name, or `anonymous` (upload-limits.ts).
const CALLER = /^(?:[0-9a-f]{64}|anonymous)$/;
// verify.ts stamps are a compact UTC time and random hex; accept any plain file name of that alphabet.
const STAMP = /^[0-9A-Za-z._-]+$/;

/**
 * The inverse of the key builders of this module: what `key` is and its parts.
 * Only keys a builder would produce from valid parts are recognised (names,
 * tags, digests, upload ids and callers are checked against their grammars, and
 * the key is rebuilt and compared), so whatever else lies in the store, and
 * every prefix, comes back as `unknown`.
 *
 * @example
 * ```ts
 * const parsed = parseKey("repositories/library/alpine/_manifests/tags/latest");
 * // { kind: "tagLink", name: "library/alpine", tag: "latest" }
 * ```
 */
export function parseKey(key: string): ParsedKey {
  const parsed = parseSegments(key.split("/"));
  return parsed !== undefined && keyOf(parsed) === key ? parsed : { kind: "unknown", key };
}

/** The key a parsed key came from (the builder its kind is named after). */
function keyOf(parsed: Exclude<ParsedKey, { kind: "unknown" }>): string {
  switch (parsed.kind) {
    case "blobData": return blobData(parsed.digest);
    case "layerLink": return layerLink(parsed.name, parsed.digest);
    case "manifestRevision": return manifestRevision(parsed.name, parsed.digest);
    case "tagLink": return tagLink(parsed.name, parsed.tag);
    case "referrer": return referrer(parsed.name, parsed.subject, parsed.manifest);
    case "uploadData": return uploadData(parsed.name, parsed.uuid);
    case "callerUpload": return callerUpload(parsed.caller, parsed.uuid);
    case "catalogEntry": return catalogEntry(parsed.name);
    case "quarantineData": return quarantineData(parsed.digest, parsed.stamp);
    case "quarantineInfo": return quarantineInfo(parsed.digest, parsed.stamp);
  }
}

type Parsed = Exclude<ParsedKey, { kind: "unknown" }> | undefined;

/** Read the segments by the first one; {@link parseKey} then checks the rebuilt key. */
function parseSegments(segments: string[]): Parsed {
  const [top, ...rest] = segments;
  switch (top) {
    case "blobs": {
      const digest = rest.length === 4 && rest[3] === "data" ? digestOf(rest[0], rest[2]) : undefined;
      return digest && { kind: "blobData", digest };
    }
    case "repositories": return parseRepositoryKey(rest);
    case "uploads": {
      const [callers, caller = "", uuid = ""] = rest;
      const ok = rest.length === 3 && `${top}/${callers}` === UPLOADS_INDEX && CALLER.test(caller) && UPLOAD_ID.test(uuid);
      return ok ? { kind: "callerUpload", caller, uuid } : undefined;
    }
    case CATALOG_PREFIX: {
      const hex = rest.join("/").replaceAll("+/", "");
      const name = catalogName(hex);
      return isValidName(name) ? { kind: "catalogEntry", name } : undefined;
    }
    case QUARANTINE_PREFIX: {
      const [algorithm, hex, stamp = "", file] = rest;
      const digest = rest.length === 4 && STAMP.test(stamp) ? digestOf(algorithm, hex) : undefined;
      if (!digest) return undefined;
      if (file === "data") return { kind: "quarantineData", digest, stamp };
      return file === "info" ? { kind: "quarantineInfo", digest, stamp } : undefined;
    }
    default: return undefined;
  }
}

/**
 * `<name…>/<_kind>/<rest…>` under `repositories/`. Name components start with
 * `[a-z0-9]`, so the first `_`-prefixed segment ends the name.
 */
function parseRepositoryKey(segments: string[]): Parsed {
  const at = segments.findIndex((s) => s.startsWith("_"));
  const name = segments.slice(0, at).join("/");
  if (at < 1 || !isValidName(name)) return undefined;
  const rest = segments.slice(at + 1);
  switch (`${segments[at]}/${rest.length}`) {
    case "_layers/2": {
      const digest = digestOf(rest[0], rest[1]);
      return digest && { kind: "layerLink", name, digest };
    }
    case "_manifests/3": {
      const digest = rest[0] === "revisions" ? digestOf(rest[1], rest[2]) : undefined;
      return digest && { kind: "manifestRevision", name, digest };
    }
    case "_manifests/2": {
      const tag = rest[1] ?? "";
      return rest[0] === "tags" && isValidTag(tag) ? { kind: "tagLink", name, tag } : undefined;
    }
    case "_referrers/3": {
      const subject = digestOf(rest[0], rest[1]);
      const manifest = tryParseDigest(rest[2] ?? "");
      return subject && manifest && { kind: "referrer", name, subject, manifest };
    }
    case "_uploads/2": {
      const uuid = rest[0] ?? "";
      return UPLOAD_ID.test(uuid) && rest[1] === "data" ? { kind: "uploadData", name, uuid } : undefined;
    }
    default: return undefined;
  }
}

function digestOf(algorithm: string | undefined, hex: string | undefined): Digest | undefined {
  return algorithm === undefined || hex === undefined ? undefined : tryParseDigest(`${algorithm}:${hex}`);
}

/**
 * Where the base stores keep each object: the key builders of this module and
 * their inverse, as one value. {@link registryKitLayout} is the layout of this
 * module; another (Distribution's, so a registry can serve its storage) is a
 * second implementation of the same interface.
 */
export interface KeyLayout {
  blobData(digest: Digest): string;
  layerLink(name: string, digest: Digest): string;
  revisionsPrefix(name: string): string;
  manifestRevision(name: string, digest: Digest): string;
  tagsPrefix(name: string): string;
  tagLink(name: string, tag: string): string;
  referrersPrefix(name: string, subject: Digest): string;
  referrer(name: string, subject: Digest, manifest: Digest): string;
  uploadData(name: string, uuid: string): string;
  /** The prefix of every repository marker of the catalog. */
  readonly catalogPrefix: string;
  /** The prefix of every repository's objects. */
  readonly repositoriesPrefix: string;
  catalogEntry(name: string): string;
  parseKey(key: string): ParsedKey;
}

/** The registry-kit layout (the table at the top of this module). */
export const registryKitLayout: KeyLayout = Object.freeze({
  blobData, layerLink, revisionsPrefix, manifestRevision, tagsPrefix, tagLink, referrersPrefix, referrer, uploadData,
  catalogPrefix: CATALOG_PREFIX, repositoriesPrefix: repositoriesUnder(""), catalogEntry, parseKey,
});
