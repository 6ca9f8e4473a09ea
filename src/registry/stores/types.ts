/**
 * The repository layer every feature of the registry composes (docs/stores.md):
 * blobs, manifests, tags, uploads and repositories as five small stores, the
 * bundle {@link RegistryStores}, and {@link StoreWrapper}, a function that puts
 * a feature around the stores below it. Handlers translate HTTP into calls of
 * these stores and nothing else; only the base stores (`stores/base/`) know
 * storage keys and call the driver.
 *
 * Conventions every method follows: the repository name comes first (already
 * checked against the name grammar), the last argument is the
 * {@link StoreCall}; a missing object reads as `undefined`, and a write that
 * cannot be done throws a `RegistryError` (`BLOB_UNKNOWN`, `DENIED`, …), which
 * the registry answers as itself.
 *
 * @module
 */
import type { Digest, DigestAlgorithm } from "../../oci/digest.js";
import type { Descriptor, ParsedManifest } from "../manifest-document.js";
import type { DeleteRepositoryOptions, DeleteRepositoryReport, TagDetailsOptions, TagDetailsPage } from "./listing-types.js";

export type { Descriptor, Digest, DigestAlgorithm, ParsedManifest };

/**
 * Who asks, passed to every store method. `request` is absent when no HTTP
 * request is behind the call (garbage collection, the CLI, tests); the event
 * wrapper takes Distribution's `request` fields and URLs from it. `caller` is
 * the registry's `callerOf` answer for the request (`undefined`: anonymous).
 */
export interface StoreCall {
  /** The HTTP request being answered, if any. */
  readonly request?: Request;
  /** Who makes the call, as `callerOf` says; `undefined` when anonymous or unknown. */
  readonly caller?: string;
}

/**
 * Extra response headers a wrapper attaches to what it returns (the
 * pull-through cache's `Cache-Status`); the handler adds them to its answer.
 */
export interface WithHeaders {
  /** Header name → value, added to the response. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A blob as a repository sees it. */
export interface BlobInfo extends WithHeaders {
  /** Its digest. */
  readonly digest: Digest;
  /** Its size in bytes; `-1` when not known (bytes streamed from an upstream that sent no length: no `Content-Length`). */
  readonly size: number;
}

/** Options of {@link BlobStore.read}. */
export interface BlobReadOptions {
  /**
   * A `Range` header's value (`bytes=…`): one satisfiable byte range is
   * answered with that part (`range` set in the answer), an unsatisfiable one
   * throws 416 `RANGE_INVALID`, anything else gets the whole blob (RFC 9110).
   */
  range?: string;
  /** Answer with a time-limited URL of the bytes when the storage can give one (the 307 of a blob GET). */
  redirect?: {
    /** How long the URL stays valid. */
    expiresInSeconds: number;
  };
}

/** What {@link BlobStore.read} gives: the bytes, or where to fetch them. */
export type BlobContent =
  | (BlobInfo & {
      /** The bytes themselves. */
      readonly kind: "bytes";
      /** The bytes (of `range` when one was asked for). */
      readonly body: ReadableStream<Uint8Array>;
      /** The range the body holds, when one was asked for (a 206); `size` stays the whole blob's. */
      readonly range?: ByteRange;
    })
  | (WithHeaders & {
      /** A URL to fetch the bytes from. */
      readonly kind: "redirect";
      /** The blob's digest. */
      readonly digest: Digest;
      /** A URL the client may GET the bytes from for a while. */
      readonly url: string;
    });

/** Bytes `start` to `end` of a blob, both included. */
export interface ByteRange {
  /** The first byte. */
  start: number;
  /** The last byte. */
  end: number;
}

/** A blob just linked into a repository (a commit or a mount). */
export interface BlobLinked extends BlobInfo {
  /** Whether this made the repository (its first object). */
  readonly created: boolean;
}

/** Whether a write made the repository. */
export interface Created {
  /** True when this write made the repository (its first object). */
  created: boolean;
}

/** What a manifest delete removed. */
export interface ManifestDeleted {
  /** The tags that pointed at the manifest and went with it. */
  untagged: string[];
  /** True when the repository left the catalog (it holds no manifest any more). */
  emptied: boolean;
}

/** A page asked of a list: entries after `last`, at most `n`. */
export interface PageAsk {
  /** Entries strictly after this one. */
  last?: string;
  /** At most this many entries. */
  n: number;
}

/** A page of tags. */
export interface TagPage {
  /** The tags, in lexical order. */
  tags: string[];
  /** Whether more follow. */
  truncated: boolean;
}

/** A page of the catalog. */
export interface CatalogPage {
  /** Repository names, in lexical order. */
  repositories: string[];
  /** Whether more follow. */
  truncated: boolean;
}

/** Options of {@link UploadStore.commit}. */
export interface UploadCommit {
  /** The bytes of the upload that make the blob (its size when they were all sent). */
  size: number;
  /** Their digest when the caller knows it (the commit then need not read them again). */
  computed?: string;
}

/** Blobs linked into repositories (a blob is visible in a repository only once pushed or mounted there). */
export interface BlobStore {
  /** The blob if it is linked in `name`. */
  stat(name: string, digest: Digest, call: StoreCall): Promise<BlobInfo | undefined>;
  /** Its bytes (or a redirect URL when `options.redirect` is set and the storage offers one); `undefined` when not linked in `name`. */
  read(name: string, digest: Digest, options: BlobReadOptions, call: StoreCall): Promise<BlobContent | undefined>;
  /** Unlink the blob from `name` (the bytes stay for other repositories); `BLOB_UNKNOWN` when not linked. */
  delete(name: string, digest: Digest, call: StoreCall): Promise<void>;
  /**
   * Link into `name` a blob linked in `from`; `undefined` (nothing done) when
   * `from` lacks it. `from` `undefined` links bytes stored for any
   * repository: only for a caller that checks elsewhere that `name` may
   * have them (the pull-through cache asks the upstream). `confirm`, when
   * given, is asked once the bytes are known to be there, before the link is
   * written; `false` (or a throw) leaves everything as it was.
   */
  mount(name: string, from: string | undefined, digest: Digest, call: StoreCall, confirm?: () => Promise<boolean>): Promise<BlobLinked | undefined>;
}

/** A stored manifest revision of a repository. */
export interface StoredManifest extends WithHeaders {
  /** Its digest (of its exact bytes). */
  readonly digest: Digest;
  /** Its media type, as pushed. */
  readonly mediaType: string;
  /** Its size in bytes. */
  readonly size: number;
  /** `artifactType`, or for an image manifest its config's media type. */
  readonly artifactType?: string;
  /** The digest of its `subject`, when it has one. */
  readonly subject?: string;
  /** The bytes, for a small manifest (read with the revision); else read them with `body()`. */
  readonly bytes?: Uint8Array;
  /** The bytes of a manifest too large to be held (`undefined` when it went meanwhile). */
  body?(): Promise<ReadableStream<Uint8Array> | undefined>;
  /**
   * The stored revision's version (its size and modification time from one
   * stat). Passed back as `known`, it lets a store answer without reading
   * when the revision did not change (how the manifest cache revalidates).
   */
  readonly version: string;
}

/** What {@link ManifestStore.put} stores: checked bytes and their document. */
export interface ManifestWrite {
  /** The digest of `bytes`. */
  digest: Digest;
  /** The exact bytes, stored and served as they are. */
  bytes: Uint8Array;
  /** The parsed document (media type, references, subject). */
  manifest: ParsedManifest;
  /** Point this tag at the manifest too. */
  tag?: string;
  /**
   * Runs once the revision is stored, before its tag and referrers entry:
   * when it throws, a revision this call created is removed and the error
   * propagates. The registry checks the references again here, so a garbage
   * collection that unlinked one meanwhile either sees this revision in its
   * next listing and keeps them, or is seen by this check (docs/gc.md).
   */
  confirm?: () => Promise<void>;
}

/** One entry of the referrers index: a manifest whose `subject` is the subject asked for. */
export interface ReferrerDescriptor {
  /** The referring manifest's media type. */
  mediaType: string;
  /** Its digest. */
  digest: string;
  /** Its size in bytes. */
  size: number;
  /** Its `artifactType` (or config media type). */
  artifactType?: string;
  /** Its annotations. */
  annotations?: Record<string, string>;
}

/** Manifest revisions of repositories, and the referrers index. */
export interface ManifestStore {
  /**
   * The revision `digest` of `name`, `undefined` when not stored. With
   * `known` (an answer of an earlier call), resolves to `known` itself when
   * the stored revision's version is still `known.version`.
   */
  get(name: string, digest: Digest, call: StoreCall, known?: StoredManifest): Promise<StoredManifest | undefined>;
  /** Store a checked manifest (bytes, revision, referrers entry, then the tag); `created` when this made the repository. */
  put(name: string, write: ManifestWrite, call: StoreCall): Promise<Created>;
  /** Remove the revision, every tag pointing at it and its referrers entry; `MANIFEST_UNKNOWN` when not stored. `emptied`: the repository left the catalog. */
  delete(name: string, digest: Digest, call: StoreCall): Promise<ManifestDeleted>;
  /** The manifests of `name` whose subject is `subject`, at most `limit`, in index order. */
  referrers(name: string, subject: Digest, options: { artifactType?: string; limit: number }, call: StoreCall): Promise<ReferrerDescriptor[]>;
}

/** Where a tag points. */
export interface ResolvedTag extends WithHeaders {
  /** The manifest digest. */
  readonly digest: Digest;
  /** The tag link's version (see {@link StoredManifest.version}). */
  readonly version: string;
  /** When the link was last written (ms since the epoch): pushed, moved, or confirmed upstream by the pull-through cache. */
  readonly modified: number;
}

/** Tags of repositories. */
export interface TagStore {
  /** Where `tag` of `name` points; with `known`, `known` itself while the link's version is unchanged. */
  resolve(name: string, tag: string, call: StoreCall, known?: ResolvedTag): Promise<ResolvedTag | undefined>;
  /** Tags in lexical order after `last`, at most `n`; `NAME_UNKNOWN` when the repository does not exist. */
  list(name: string, page: PageAsk, call: StoreCall): Promise<TagPage>;
  /** Point `tag` at a stored manifest (rewriting an unchanged link renews its time). */
  set(name: string, tag: string, digest: Digest, call: StoreCall): Promise<void>;
  /** Remove `tag`; `MANIFEST_UNKNOWN` when there is no such tag. Resolves to the digest it pointed at. */
  delete(name: string, tag: string, call: StoreCall): Promise<string>;
  /** Tags with their digests and push times (the web page, retention). */
  details(name: string, options: TagDetailsOptions, call: StoreCall): Promise<TagDetailsPage>;
}

/** An upload session, as its signed `_state` carries it between requests. */
export interface UploadSession {
  /** The upload id. */
  readonly uuid: string;
  /** When it started (ms since the epoch, this registry's clock). */
  readonly startedAt: number;
  /** The hash of the caller who started it, for the per-caller limits; absent for anonymous. */
  readonly owner?: string;
}

/** Options of {@link UploadStore.append}. */
export interface UploadAppend {
  /** The size the upload must have now (else 416 `RANGE_INVALID`). */
  expectedSize: number;
  /** The digest algorithm the finished blob will be named by. */
  algorithm: DigestAlgorithm;
  /** The body's declared length (`Content-Length`), refused at once when over the byte limits. */
  declaredLength?: number;
  /** Aborts the append (the request's signal). */
  signal?: AbortSignal;
}

/** What an append did. */
export interface UploadAppended {
  /** The upload's size after it. */
  size: number;
  /** Bytes this append added. */
  written: number;
  /** The digest of every byte so far, when this process has seen them all (then the commit need not re-read). */
  digest?: string;
}

/** Blob uploads in progress. */
export interface UploadStore {
  /**
   * Open a session in `name` (within the upload limits). `single`: the whole
   * blob follows in the same request (a single-POST upload), no session is
   * handed to the client (so no `upload.started` event).
   */
  start(name: string, call: StoreCall, options?: { single?: boolean }): Promise<UploadSession>;
  /** Append `body` at `options.expectedSize`. */
  append(name: string, session: UploadSession, body: ReadableStream<Uint8Array> | null, options: UploadAppend, call: StoreCall): Promise<UploadAppended>;
  /** The session's size; `undefined` when it is gone, too old or abandoned. */
  status(name: string, session: UploadSession, call: StoreCall): Promise<number | undefined>;
  /**
   * Verify the upload's first `size` bytes against `digest` (`computed` when
   * the caller knows their digest already) and make the blob visible in
   * `name`; a mismatch removes the session (400 `DIGEST_INVALID`).
   */
  commit(name: string, session: UploadSession, digest: Digest, options: UploadCommit, call: StoreCall): Promise<BlobLinked>;
  /** Remove the session. */
  cancel(name: string, session: UploadSession, call: StoreCall): Promise<void>;
}

/** Repositories as a whole. */
export interface RepositoryStore {
  /**
   * Called before a write request to `name` is read (a push, a delete, an
   * upload's every request): a wrapper that refuses writes to the repository
   * throws here, before any byte of the body is read (the pull-through cache
   * answers 405 for proxied repositories). The base store allows everything.
   */
  writable(name: string, call: StoreCall): Promise<void>;
  /** Repository names in lexical order after `last`, at most `n`. */
  catalog(page: PageAsk, call: StoreCall): Promise<CatalogPage>;
  /**
   * Take `name` out of the catalog when it holds no manifest (after a refused
   * push, whose blobs were let in before); resolves to whether it was taken out.
   */
  forgetIfEmpty(name: string, call: StoreCall): Promise<boolean>;
  /** Delete a whole repository (see `deleteRepository`). */
  delete(name: string, options: DeleteRepositoryOptions, call: StoreCall): Promise<DeleteRepositoryReport>;
}

/** The stores a registry serves from: what handlers call and what wrappers wrap. */
export interface RegistryStores {
  /** Blobs linked into repositories. */
  blobs: BlobStore;
  /** Manifest revisions and the referrers index. */
  manifests: ManifestStore;
  /** Tags. */
  tags: TagStore;
  /** Blob uploads in progress. */
  uploads: UploadStore;
  /** Repositories as a whole: the catalog, deletes, the write gate. */
  repositories: RepositoryStore;
}

/**
 * A feature around the stores: given the stores below, the stores the layer
 * above sees. Replace only the methods the feature changes
 * (`{ ...below, blobs: { ...below.blobs, read: … } }`).
 */
export type StoreWrapper = (below: RegistryStores) => RegistryStores;

export type { DeleteRepositoryOptions, DeleteRepositoryReport, TagDetail, TagDetailsOptions, TagDetailsPage } from "./listing-types.js";
