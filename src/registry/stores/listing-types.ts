/**
 * The types of the stores' two maintenance answers, kept beside the store
 * types (types.ts re-exports them): a page of tags with their push times
 * (`TagStore.details`, `tagDetails`) and a repository delete
 * (`deleteRepository`).
 *
 * @module
 */
import type { EventHook } from "../../events/hook.js";
import type { LogHook } from "../../http/log.js";
import type { WritePolicy } from "../policy/write-policy.js";

/** One tag of `tagDetails` and `TagStore.details`. */
export interface TagDetail {
  /** The tag. */
  tag: string;
  /** The manifest digest it points to. */
  digest: string;
  /** When the tag was last pushed (or moved). */
  pushedAt: Date;
}

/** A page of `tagDetails` and `TagStore.details`. */
export interface TagDetailsPage {
  /** The tags, in lexical order. */
  tags: TagDetail[];
  /** Whether more tags follow the last one. */
  truncated: boolean;
}

/** Options of `tagDetails` and `TagStore.details`. */
export interface TagDetailsOptions {
  /** At most this many tags (default 1000). */
  limit?: number;
  /** Only tags after this one, in lexical order. */
  after?: string;
}

/** Options of `deleteRepository`. */
export interface DeleteRepositoryOptions {
  /**
   * Write policies to ask first (`deleteRepository`); e.g. `immutableTags`
   * refuses a repository holding an immutable tag. Skipped with `force`.
   */
  policies?: readonly WritePolicy[];
  /** Delete even when a policy refuses. Default false. */
  force?: boolean;
  /** Who deletes, as the policies see it. */
  caller?: string;
  /** Receives one `info` event with the counts. */
  log?: LogHook;
  /** Receives `repository.emptied` (with the counts in `target.report`, `caller` as the actor) when there was something to delete. */
  onEvent?: EventHook;
}

/** What `deleteRepository` removed. */
export interface DeleteRepositoryReport {
  /** The repository. */
  repository: string;
  /** Whether there was anything to delete (objects or a catalog entry). */
  found: boolean;
  /** Tags removed. */
  tags: number;
  /** Manifest revisions removed. */
  manifests: number;
  /** Blob links removed (the blobs stay until garbage collection). */
  links: number;
  /** Uploads in progress removed. */
  uploads: number;
}
