/**
 * `immutableTags(patterns)`: tags that, once they exist, are never moved to
 * another manifest nor deleted (pushing the same digest again is fine).
 *
 * @module
 */
import { anyGlob } from "../../../util/glob.js";
import type { StorageDriver } from "../../../storage/driver.js";
import { contentFinder } from "./immutable-content.js";
import type { PendingWrite, PolicyRefusal, WritePolicy } from "../../policy/write-policy.js";

/**
 * Which tags are immutable: a list of tag globs (every repository), or a map
 * of repository glob to tag globs. Globs: `*` any run of characters (`/`
 * included), `?` one character.
 */
export type ImmutableTagPatterns = readonly string[] | Readonly<Record<string, readonly string[]>>;

/** The {@link WritePolicy} of immutable tags, which also answers whether a tag is protected (retention asks). */
export interface ImmutableTags extends WritePolicy {
  /** Whether `tag` of `repository` matches a pattern. */
  protects(repository: string, tag: string): boolean;
}

/**
 * Make matching tags immutable. Refused with 403 `DENIED`:
 *
 * - a manifest PUT by tag that would point an existing matching tag at another digest;
 * - `DELETE` of a matching tag;
 * - `DELETE` of a manifest by digest while a matching tag points at it (the
 *   tag would go with it);
 * - `DELETE` of what a matching tag's manifest references in its repository:
 *   a blob (config, layer) by `DELETE /v2/<name>/blobs/<digest>`, a child
 *   manifest of an index by digest, recursively (the tag would no longer pull);
 * - `deleteRepository` (and the management API's repository delete) of a
 *   repository holding a matching tag, unless forced.
 *
 * Retention in garbage collection never removes a matching tag when given
 * this policy's {@link ImmutableTags.protects}.
 *
 * @example
 * ```ts
 * createRegistry({ storage, policies: [immutableTags(["v*", "release-*"])] });
 * createRegistry({ storage, policies: [immutableTags({ "prod/*": ["*"], "*": ["v*"] })] });
 * ```
 */
export function immutableTags(patterns: ImmutableTagPatterns): ImmutableTags {
  const rules: { repository: (name: string) => boolean; tag: (tag: string) => boolean }[] = Array.isArray(patterns)
    ? [{ repository: () => true, tag: anyGlob(patterns as readonly string[]) }]
    : Object.entries(patterns as Readonly<Record<string, readonly string[]>>).map(([repository, tags]) => ({ repository: anyGlob([repository]), tag: anyGlob(tags) }));
  const protects = (repository: string, tag: string) => rules.some((r) => r.repository(repository) && r.tag(tag));
  const refuse = (write: PendingWrite, tag: string, message: string): PolicyRefusal => ({
    message,
    detail: { policy: "immutableTags", repository: write.repository, tag },
  });
  const holderOf = contentFinder(protects);
  /** Refuse deleting `digest` of the write's repository when a matching tag's image holds it. */
  const held = async (write: PendingWrite & { digest: string }, storage: StorageDriver, what: string): Promise<PolicyRefusal | undefined> => {
    const holder = await holderOf(storage, write.repository, write.digest);
    if (!holder) return undefined;
    return refuse(write, holder.tag, `${what} ${write.digest} cannot be deleted: the immutable tag ${holder.tag} of ${write.repository} (${holder.manifest}) references it`);
  };
  return {
    protects,
    async check(write, storage) {
      switch (write.action) {
        case "push":
          if (write.tag === undefined || write.replaces === undefined || write.replaces === write.digest || !protects(write.repository, write.tag)) return undefined;
          return refuse(write, write.tag, `tag ${write.tag} of ${write.repository} is immutable: it points at ${write.replaces} and cannot be moved to ${write.digest}`);
        case "deleteTag":
          return protects(write.repository, write.tag) ? refuse(write, write.tag, `tag ${write.tag} of ${write.repository} is immutable and cannot be deleted`) : undefined;
        case "deleteBlob":
          return held(write, storage, "blob");
        case "deleteManifest":
        case "deleteRepository": {
          const tag = write.tags.find((t) => protects(write.repository, t));
          if (tag === undefined) return write.action === "deleteManifest" ? held(write, storage, "manifest") : undefined;
          const what = write.action === "deleteManifest" ? `manifest ${write.digest}` : `repository ${write.repository}`;
          return refuse(write, tag, `${what} cannot be deleted: it holds the immutable tag ${tag}`);
        }
        default:
          return undefined;
      }
    },
    // Two first pushes of one tag race: only one may create it.
    serializeOn: (write) => (write.action === "push" && write.tag !== undefined && protects(write.repository, write.tag) ? [`tag ${write.repository}:${write.tag}`] : []),
  };
}
