/**
 * Parsing and structural checks of a pushed manifest or index document. The
 * bytes are stored exactly as received; this only extracts what the registry
 * needs (references to check, `subject`, `artifactType`) and rejects documents
 * that are not manifests.
 *
 * @module
 */
import { tryParseDigest, type Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";
import { INDEX_MEDIA_TYPES } from "../oci/wire.js";

/** A content descriptor (`mediaType`, `digest`, `size`, …) from a manifest. */
export interface Descriptor {
  /** The media type of what it points at. */
  mediaType: string;
  /** Its digest. */
  digest: Digest;
  /** Its size in bytes. */
  size: number;
  /** Its `artifactType`, when given. */
  artifactType?: string;
  /** Its annotations, when given. */
  annotations?: Record<string, string>;
  /** Where else its bytes may be fetched (foreign and non-distributable layers). */
  urls?: string[];
  /** The `platform` of an index entry, when it names both. */
  platform?: {
    /** e.g. `amd64`. */
    architecture: string;
    /** e.g. `linux`. */
    os: string;
  };
}

/** What the registry reads from a manifest document. */
export interface ParsedManifest {
  /** Its media type (the document's, or the `Content-Type` it was pushed with). */
  mediaType: string;
  /** Whether it is an image index (or manifest list). */
  isIndex: boolean;
  /** Blobs the manifest references (config and layers). */
  blobs: Descriptor[];
  /** Child manifests (indexes only). */
  manifests: Descriptor[];
  /** The manifest it refers to (the referrers API). */
  subject?: Descriptor;
  /** `artifactType`, or for an image manifest its config's media type. */
  artifactType?: string;
  /** Its annotations. */
  annotations?: Record<string, string>;
}

// Content-Type values that say nothing about the manifest kind; the document's mediaType decides.
const GENERIC_TYPES = new Set(["", "application/json", "application/octet-stream", "text/plain"]);

function invalid(message: string, detail?: unknown): RegistryError {
  return new RegistryError("MANIFEST_INVALID", message, 400, detail ?? null);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isObject(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === "string") out[k] = v;
  return out;
}

function descriptor(value: unknown, where: string): Descriptor {
  if (!isObject(value)) throw invalid(`${where} is not a descriptor`);
  const { mediaType, digest, size } = value;
  if (typeof mediaType !== "string" || mediaType === "") throw invalid(`${where} has no mediaType`);
  if (typeof digest !== "string") throw invalid(`${where} has no digest`);
  const parsed = tryParseDigest(digest);
  if (!parsed) throw invalid(`${where} has an invalid or unsupported digest`, { digest: digest.slice(0, 300) });
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) throw invalid(`${where} has an invalid size`);
  const out: Descriptor = { mediaType, digest: parsed, size };
  if (typeof value.artifactType === "string") out.artifactType = value.artifactType;
  const annotations = stringMap(value.annotations);
  if (annotations) out.annotations = annotations;
  if (value.urls !== undefined && value.urls !== null) {
    if (!Array.isArray(value.urls) || !value.urls.every((u) => typeof u === "string")) throw invalid(`${where} has urls that are not a list of strings`);
    if (value.urls.length > 0) out.urls = value.urls as string[];
  }
  const platform = value.platform;
  if (isObject(platform) && typeof platform.architecture === "string" && typeof platform.os === "string") {
    out.platform = { architecture: platform.architecture, os: platform.os };
  }
  return out;
}

/** The media type part of a Content-Type header, lowercased, without parameters. */
export function baseMediaType(header: string | null): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * Parse manifest bytes. `contentType` is the request's Content-Type; the media
 * type comes from it, or from the document's `mediaType` when the header is
 * absent or generic. Throws `MANIFEST_INVALID` (400).
 */
export function parseManifest(bytes: Uint8Array, contentType: string | null, accepted: ReadonlySet<string>): ParsedManifest {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalid("manifest is not valid JSON");
  }
  if (!isObject(doc)) throw invalid("manifest is not a JSON object");
  const header = baseMediaType(contentType);
  const docType = typeof doc.mediaType === "string" ? doc.mediaType : undefined;
  let mediaType: string | undefined;
  if (!GENERIC_TYPES.has(header)) {
    if (docType !== undefined && docType !== header) throw invalid(`mediaType in manifest should be '${header}' not '${docType}'`);
    mediaType = header;
  } else {
    mediaType = docType;
  }
  if (mediaType === undefined) throw invalid("manifest media type is unknown: set Content-Type or mediaType");
  if (!accepted.has(mediaType)) throw invalid("manifest media type is not accepted", { mediaType: mediaType.slice(0, 300) });
  if (doc.schemaVersion !== 2) throw invalid("schemaVersion must be 2");

  const isIndex = INDEX_MEDIA_TYPES.includes(mediaType);
  const parsed: ParsedManifest = { mediaType, isIndex, blobs: [], manifests: [] };
  if (isIndex) {
    if (!Array.isArray(doc.manifests)) throw invalid("index has no manifests array");
    parsed.manifests = doc.manifests.map((m, i) => descriptor(m, `manifests[${i}]`));
  } else {
    const config = descriptor(doc.config, "config");
    if (!Array.isArray(doc.layers)) throw invalid("manifest has no layers array");
    parsed.blobs = [config, ...doc.layers.map((l, i) => descriptor(l, `layers[${i}]`))];
    parsed.artifactType = config.mediaType;
  }
  if (typeof doc.artifactType === "string") parsed.artifactType = doc.artifactType;
  if (doc.subject !== undefined) parsed.subject = descriptor(doc.subject, "subject");
  const annotations = stringMap(doc.annotations);
  if (annotations) parsed.annotations = annotations;
  return parsed;
}
