/**
 * The contract between the registry's pull-through cache and the registry it
 * pulls from (docs/architecture.md rule 6: a small pluggable contract). The
 * registry owns what is stored and how; an `Upstream` only fetches.
 * `registryUpstream` in `registry-kit/client` implements it over HTTP with
 * anonymous, Basic and Bearer authentication; a test may implement it over
 * another registry handler.
 *
 * Every method answers `undefined` when the upstream says the object does not
 * exist (404), and throws for anything else that is not a success: a network
 * failure, a timeout, a refused login, a 5xx or a 429. An error with a
 * numeric `status` of 429 is answered `TOOMANYREQUESTS` when nothing is cached;
 * one with `status` 401 or 403 and `refused: "repository"` (the upstream
 * answered the repository's own request so, its login having succeeded or
 * not been needed) is answered 403 `DENIED`. Anything else is a 502.
 *
 * @module
 */

/** A manifest as the upstream has it. */
export interface UpstreamManifest {
  /** The exact bytes. */
  bytes: Uint8Array;
  /** Its `Content-Type`. */
  mediaType: string;
  /** The `Docker-Content-Digest` the upstream sent, if any (checked against the bytes). */
  digest?: string;
}

/** What a manifest HEAD told: the digest a reference points to upstream. */
export interface UpstreamManifestHead {
  /** The digest (`Docker-Content-Digest`). */
  digest: string;
  /** Its `Content-Type`, when sent. */
  mediaType?: string;
  /** Its `Content-Length`, when sent. */
  size?: number;
}

/** A blob's bytes from the upstream, unverified. */
export interface UpstreamBlob {
  /** The body, read once. */
  body: ReadableStream<Uint8Array>;
  /** The `Content-Length`, when the upstream sent one. */
  size?: number;
}

/** A registry the pull-through cache fetches from. Names are the upstream's own (the local prefix removed). */
export interface Upstream {
  /** `HEAD /v2/<name>/manifests/<reference>` with every manifest media type accepted. */
  headManifest(name: string, reference: string, signal?: AbortSignal): Promise<UpstreamManifestHead | undefined>;
  /** `GET /v2/<name>/manifests/<reference>` with every manifest media type accepted. */
  getManifest(name: string, reference: string, signal?: AbortSignal): Promise<UpstreamManifest | undefined>;
  /** `HEAD /v2/<name>/blobs/<digest>`: the size, or `undefined` when unknown upstream. */
  headBlob(name: string, digest: string, signal?: AbortSignal): Promise<{
    /** The upstream's `Content-Length`, when sent. */
    size?: number;
  } | undefined>;
  /** `GET /v2/<name>/blobs/<digest>`; the caller reads or cancels the body. */
  getBlob(name: string, digest: string, signal?: AbortSignal): Promise<UpstreamBlob | undefined>;
}
