/**
 * Names on the wire, in one place (docs/architecture.md rule 8): header families and the
 * manifest media types registry-kit accepts and serves. Shared by the registry
 * (which writes them) and the client (which reads them).
 *
 * The spec writes neutral names (`Container-*`, `application/vnd.container.…`);
 * real clients speak the Docker and OCI ones. registry-kit emits both header
 * families and accepts every type below.
 *
 * @module
 */

/** The API version every response carries, under both header names. */
export const API_VERSION = "registry/2.0";

/** Header pairs: the spec's neutral name and the name real clients read. */
export const HEADERS = {
  /** `registry/2.0` on every response. */
  apiVersion: ["Container-Distribution-Api-Version", "Docker-Distribution-Api-Version"],
  /** The digest of a manifest or blob. */
  contentDigest: ["Container-Content-Digest", "Docker-Content-Digest"],
  /** The id of an upload session. */
  uploadUuid: ["Container-Upload-Uuid", "Docker-Upload-UUID"],
} as const;

/** Set both names of a header pair on `headers`. */
export function setPair(headers: Headers, pair: readonly string[], value: string): void {
  for (const name of pair) headers.set(name, value);
}

/** The headers every registry response carries, as name/value pairs. */
export const baseHeaderList: readonly [string, string][] = [
  ...HEADERS.apiVersion.map((name): [string, string] => [name, API_VERSION]),
  ["X-Content-Type-Options", "nosniff"],
];

/** Headers every registry response carries, over `init`. */
export function baseHeaders(init?: HeadersInit): Headers {
  const headers = new Headers(init);
  for (const [name, value] of baseHeaderList) headers.set(name, value);
  return headers;
}

/** Manifest and index media types. */
export const MEDIA_TYPES = {
  /** The spec's neutral schema 2 manifest type. */
  neutralManifest: "application/vnd.container.distribution.manifest.v2+json",
  /** Docker image manifest, schema 2. */
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  /** Docker manifest list (multi-platform). */
  dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  /** OCI image manifest. */
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  /** OCI image index (multi-platform). */
  ociIndex: "application/vnd.oci.image.index.v1+json",
  /** The spec's neutral image config type. */
  neutralConfig: "application/vnd.container.image.v1+json",
  /** The spec's neutral layer type. */
  neutralLayer: "application/vnd.container.image.rootfs.diff.tar.gzip",
  /** The OCI empty descriptor type (`{}`), used by artifacts. */
  ociEmpty: "application/vnd.oci.empty.v1+json",
} as const;

/**
 * Layer media types whose `urls` (where a client may fetch the layer instead)
 * are checked against `validation.manifests.urls`, as Distribution does: a
 * Docker foreign layer must have urls and is never stored here; an OCI
 * non-distributable layer with urls need not be stored here; an OCI
 * distributable layer with urls must still be.
 */
export const URL_LAYER_TYPES = {
  dockerForeign: "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
  ociDistributable: ["application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.v1.tar+gzip"],
  ociNonDistributable: ["application/vnd.oci.image.layer.nondistributable.v1.tar", "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"],
} as const;

/** Media types whose documents list child manifests (indexes). */
export const INDEX_MEDIA_TYPES: readonly string[] = [MEDIA_TYPES.dockerManifestList, MEDIA_TYPES.ociIndex];

/** The manifest media types accepted on PUT by default. */
export const DEFAULT_MANIFEST_MEDIA_TYPES: readonly string[] = [
  MEDIA_TYPES.neutralManifest,
  MEDIA_TYPES.dockerManifest,
  MEDIA_TYPES.dockerManifestList,
  MEDIA_TYPES.ociManifest,
  MEDIA_TYPES.ociIndex,
];

/**
 * The name/value pairs of a `HeadersInit` as given (a `Headers`, a list of
 * pairs, or a record), without copying them into a new `Headers`.
 */
export function initPairs(init: HeadersInit): Iterable<readonly [string, string]> {
  return init instanceof Headers || Array.isArray(init) ? (init as Iterable<[string, string]>) : Object.entries(init);
}
