/**
 * What a stored manifest references, read leniently (whatever the registry
 * accepted at push time): garbage collection marks it, quotas count it.
 *
 * @module
 */
import type { LogHook } from "../../../http/log.js";
import type { StorageDriver } from "../../../storage/driver.js";
import { tryParseDigest, type Digest } from "../../../oci/digest.js";
import { blobData } from "./layout.js";
import { readSmall } from "./storage-io.js";

/** The blobs (config, layers, `blobs`) and child manifests of a manifest. */
export interface ManifestReferences {
  /** Digest values of the blobs. */
  blobs: string[];
  /** The child manifests (of an index). */
  children: Digest[];
}

/** Largest manifest read back; the registry's own limit on PUT is far below. */
const MAX_STORED_MANIFEST = 64 * 1024 * 1024;

/**
 * The references of the manifest stored under `digest`; `undefined` when its
 * bytes are missing or not JSON (with a `warn` event for the latter).
 */
export async function storedReferences(storage: StorageDriver, digest: Digest, log: LogHook): Promise<ManifestReferences | undefined> {
  let doc: unknown;
  try {
    const bytes = await readSmall(storage, blobData(digest), MAX_STORED_MANIFEST);
    if (!bytes) return undefined;
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    log({ level: "warn", msg: "cannot parse a stored manifest; it references nothing", digest: digest.value });
    return undefined;
  }
  const m = (typeof doc === "object" && doc !== null ? doc : {}) as Record<string, unknown>;
  return {
    blobs: [...descriptors(m.config), ...descriptors(m.layers), ...descriptors(m.blobs)].map((d) => d.value),
    children: descriptors(m.manifests),
  };
}

/** The valid digests of a descriptor or a list of descriptors; anything else is skipped. */
function descriptors(value: unknown): Digest[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).flatMap((d) => {
    const parsed = typeof d === "object" && d !== null && typeof (d as { digest?: unknown }).digest === "string"
      ? tryParseDigest((d as { digest: string }).digest)
      : undefined;
    return parsed ? [parsed] : [];
  });
}
