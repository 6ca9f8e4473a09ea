/**
 * What the client needs to know about manifests: the media types it asks for,
 * and reading the descriptors a manifest or index refers to.
 *
 * @module
 */
import { INDEX_MEDIA_TYPES, MEDIA_TYPES } from "../oci/wire.js";
import { RegistryClientError } from "./errors.js";
import type { Descriptor } from "./local-store.js";

/** The `Accept` header of manifest requests: every type registry-kit serves. */
export const MANIFEST_ACCEPT = [
  MEDIA_TYPES.ociManifest,
  MEDIA_TYPES.ociIndex,
  MEDIA_TYPES.dockerManifest,
  MEDIA_TYPES.dockerManifestList,
  MEDIA_TYPES.neutralManifest,
].join(", ");

/** A parsed manifest or index, with the raw bytes it came from. */
export interface ParsedManifest {
  /** The exact bytes, as served. */
  bytes: Uint8Array;
  /** Media type from the document, or the response's Content-Type. */
  mediaType: string;
  /** The verified digest of `bytes`. */
  digest: string;
  /** For an image manifest: the config (the image id) and the layers. */
  config?: Descriptor;
  /** Layer descriptors (image manifests). */
  layers: Descriptor[];
  /** For an index: the child manifests. */
  manifests: Descriptor[];
}

/** Whether a media type is an index (manifest list). */
export function isIndex(mediaType: string): boolean {
  return INDEX_MEDIA_TYPES.includes(mediaType);
}

/** Parse manifest bytes. `mediaType` is the served Content-Type, used when the document has none. */
export function parseManifest(bytes: Uint8Array, digest: string, mediaType?: string): ParsedManifest {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch {
    throw new RegistryClientError("MANIFEST_INVALID", `manifest ${digest} is not JSON`, 0);
  }
  const type = typeof doc.mediaType === "string" ? doc.mediaType : mediaType?.split(";")[0]?.trim() ?? "";
  const descriptors = (value: unknown): Descriptor[] => {
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every(isDescriptor)) {
      throw new RegistryClientError("MANIFEST_INVALID", `manifest ${digest} has invalid descriptors`, 0);
    }
    return value;
  };
  if (doc.config !== undefined && !isDescriptor(doc.config)) {
    throw new RegistryClientError("MANIFEST_INVALID", `manifest ${digest} has an invalid config`, 0);
  }
  return {
    bytes,
    mediaType: type,
    digest,
    config: doc.config as Descriptor | undefined,
    layers: descriptors(doc.layers),
    manifests: descriptors(doc.manifests),
  };
}

function isDescriptor(value: unknown): value is Descriptor {
  const d = value as Descriptor;
  return typeof d === "object" && d !== null && typeof d.digest === "string" && /^sha(256|512):[a-f0-9]+$/.test(d.digest) &&
    Number.isSafeInteger(d.size) && d.size >= 0 && typeof d.mediaType === "string";
}

/** A platform to choose from an index. */
export interface Platform {
  /** e.g. `linux`. */
  os: string;
  /** e.g. `amd64`, `arm64`. */
  architecture: string;
  /** e.g. `v8`; matched only when given. */
  variant?: string;
}

/** Pick the child of an index that matches `platform`; the first child when none says its platform. */
export function choosePlatform(index: ParsedManifest, platform: Platform): Descriptor {
  const match = index.manifests.find((m) =>
    m.platform?.os === platform.os && m.platform.architecture === platform.architecture &&
    (platform.variant === undefined || m.platform.variant === platform.variant));
  const chosen = match ?? index.manifests.find((m) => !m.platform);
  if (!chosen) {
    throw new RegistryClientError("MANIFEST_UNKNOWN", `no manifest for ${platform.os}/${platform.architecture} in index ${index.digest}`, 0);
  }
  return chosen;
}
