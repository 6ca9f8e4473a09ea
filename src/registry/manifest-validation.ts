/**
 * What a pushed manifest's references must satisfy before it is stored
 * (Distribution's `validation.manifests`): the blobs it references are in the
 * repository, the `urls` of its layers are allowed, and an index's child
 * manifests are there (for every platform, the listed ones, or none).
 *
 * @module
 */
import type { RegistryStores, StoreCall } from "./stores/types.js";
import type { Descriptor, ParsedManifest } from "./manifest-document.js";
import { RegistryError } from "../oci/errors.js";
import { URL_LAYER_TYPES } from "../oci/wire.js";
import { mapLimited } from "../util/map-limited.js";

/** A platform of an image index entry, matched on `architecture` and `os`. */
export interface IndexPlatform {
  /** e.g. `amd64`, `arm64`. */
  architecture: string;
  /** e.g. `linux`, `windows`. */
  os: string;
}

/** Rules for the `urls` of layers (Distribution's `validation.manifests.urls`). */
export interface LayerUrlRules {
  /** A URL must match one of these; absent: any URL; `[]`: none at all (Distribution's default). */
  allow?: readonly RegExp[];
  /** A URL must match none of these. */
  deny?: readonly RegExp[];
}

/** `createRegistry`'s `manifestValidation` option. */
export interface ManifestValidation {
  /**
   * Without this (the default), any descriptor carrying `urls` is taken to be
   * stored elsewhere and is not looked up. With it, Distribution's rules: a
   * Docker foreign layer must carry `urls`, each of them `http`/`https`
   * without a fragment, allowed by `allow` and not by `deny`, and is not
   * looked up; an OCI non-distributable layer's `urls` are checked the same
   * way and spare it the lookup; an OCI layer's `urls` are checked but it
   * must be stored here anyway; every other descriptor must be stored here.
   * A refused URL is 400 `MANIFEST_INVALID`.
   */
  urls?: LayerUrlRules;
  /**
   * Which child manifests of an image index must be in the repository: `all`
   * (the default), `none`, or those whose `platform` matches one listed (an
   * entry without `platform` matches none). A missing one is 400
   * `MANIFEST_BLOB_UNKNOWN`.
   */
  indexes?: "all" | "none" | {
    /** The platforms whose child manifests an index must have stored. */
    platforms: readonly IndexPlatform[];
  };
}

/** {@link ManifestValidation} checked, with stateless copies of the expressions. */
export interface ResolvedValidation {
  urls?: { allow?: RegExp[]; deny?: RegExp[] };
  indexes: "all" | "none" | IndexPlatform[];
}

/** Check `validation` and copy its expressions without `g`/`y` (which would make `test()` stateful); a `TypeError` names what is wrong. */
export function resolveValidation(validation: ManifestValidation | undefined): ResolvedValidation {
  const copies = (list: readonly RegExp[] | undefined, what: string): RegExp[] | undefined => {
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || !list.every((r) => r instanceof RegExp)) throw new TypeError(`manifestValidation.urls.${what} must be a list of RegExp`);
    return list.map((r) => new RegExp(r.source, r.flags.replace(/[gy]/g, "")));
  };
  const rules = validation?.urls;
  const allow = copies(rules?.allow, "allow");
  const deny = copies(rules?.deny, "deny");
  const urls = rules ? { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) } : undefined;
  const indexes = validation?.indexes ?? "all";
  if (indexes === "all" || indexes === "none") return { ...(urls ? { urls } : {}), indexes };
  const platforms = typeof indexes === "object" && indexes !== null ? indexes.platforms : undefined;
  if (!Array.isArray(platforms) || platforms.length === 0 || !platforms.every((p) => typeof p?.architecture === "string" && typeof p.os === "string")) {
    throw new TypeError('manifestValidation.indexes must be "all", "none" or { platforms: [{ architecture, os }, …] } with at least one platform');
  }
  return { ...(urls ? { urls } : {}), indexes: platforms.map((p) => ({ architecture: p.architecture, os: p.os })) };
}

/** Storage round trips in flight while checking references. */
export const CHECK_CONCURRENCY = 16;

/**
 * Check a pushed manifest of `name` against `validation`: layer URLs first
 * (no storage read), then that each blob and child manifest that must be in
 * the repository is there. Throws the 400 Distribution answers.
 */
export async function checkReferences(stores: RegistryStores, validation: ResolvedValidation, name: string, manifest: ParsedManifest, call: StoreCall): Promise<void> {
  const { urls, indexes } = validation;
  const blobs = urls ? manifest.blobs.filter((b) => mustBeStored(b, urls)) : manifest.blobs.filter((b) => !b.urls);
  const missingBlobs = await mapLimited(blobs, CHECK_CONCURRENCY, async (b) => ((await stores.blobs.stat(name, b.digest, call)) ? undefined : b));
  const blob = missingBlobs.find((b) => b !== undefined);
  if (blob) throw new RegistryError("MANIFEST_BLOB_UNKNOWN", "blob unknown to registry", 400, { digest: blob.digest.value });
  const wanted = indexes === "all" ? manifest.manifests : indexes === "none" ? [] : manifest.manifests.filter((m) => listed(m, indexes));
  const children = await mapLimited(wanted, CHECK_CONCURRENCY, async (m) => ((await stores.manifests.get(name, m.digest, call)) ? undefined : m));
  const child = children.find((m) => m !== undefined);
  // Distribution answers MANIFEST_BLOB_UNKNOWN for a missing child manifest too.
  if (child) throw new RegistryError("MANIFEST_BLOB_UNKNOWN", "manifest unknown to registry", 400, { digest: child.digest.value });
}

function listed(entry: Descriptor, platforms: readonly IndexPlatform[]): boolean {
  const p = entry.platform;
  return p !== undefined && platforms.some((q) => q.architecture === p.architecture && q.os === p.os);
}

/** Check `d`'s urls under `rules` (throws) and say whether `d` itself must be in the repository. */
function mustBeStored(d: Descriptor, rules: NonNullable<ResolvedValidation["urls"]>): boolean {
  if (d.mediaType === URL_LAYER_TYPES.dockerForeign) {
    if (!d.urls) throw new RegistryError("MANIFEST_INVALID", `foreign layer ${d.digest.value} has no urls`, 400, { digest: d.digest.value });
    checkUrls(d, d.urls, rules);
    return false;
  }
  if ((URL_LAYER_TYPES.ociNonDistributable as readonly string[]).includes(d.mediaType)) {
    if (!d.urls) return true;
    checkUrls(d, d.urls, rules);
    return false;
  }
  if (d.urls && (URL_LAYER_TYPES.ociDistributable as readonly string[]).includes(d.mediaType)) checkUrls(d, d.urls, rules);
  return true;
}

function checkUrls(d: Descriptor, urls: readonly string[], rules: NonNullable<ResolvedValidation["urls"]>): void {
  for (const url of urls) {
    if (!urlAllowed(url, rules)) {
      throw new RegistryError("MANIFEST_INVALID", `layer ${d.digest.value} has a URL this registry does not accept`, 400, { digest: d.digest.value, url: url.slice(0, 300) });
    }
  }
}

function urlAllowed(url: string, rules: NonNullable<ResolvedValidation["urls"]>): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.hash !== "") return false;
  if (rules.allow && !rules.allow.some((r) => r.test(url))) return false;
  return !rules.deny?.some((r) => r.test(url));
}
