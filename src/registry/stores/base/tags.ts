/**
 * The base tag store: one link object per tag holding the digest it points
 * to; its modification time is when it was last pushed (or, for the
 * pull-through cache, last confirmed upstream).
 *
 * @module
 */
import { tryParseDigest } from "../../../oci/digest.js";
import { RegistryError } from "../../../oci/errors.js";
import type { TagStore } from "../types.js";
import { versionMemo, type BaseContext } from "./context.js";
import { repositoryHasObjects } from "./repository-delete.js";
import { exists, readText, writeText } from "./storage-io.js";
import { tagDetails } from "./tag-details.js";

/** The 404 `MANIFEST_UNKNOWN` of a tag. */
export function tagUnknown(tag: string): RegistryError {
  return new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, { tag: tag.slice(0, 300) });
}

/** The tag store over `ctx`. */
export function baseTags(ctx: BaseContext): TagStore {
  const { storage, layout } = ctx;
  const versionOf = versionMemo();
  return {
    async resolve(name, tag, _call, known) {
      const key = layout.tagLink(name, tag);
      const info = await storage.stat(key);
      if (!info) return undefined;
      const version = versionOf(info);
      if (known !== undefined && known.version === version) return known;
      const linked = await readText(storage, key);
      const digest = linked === undefined ? undefined : tryParseDigest(linked.trim());
      return digest && { digest, version, modified: info.modified.getTime() };
    },

    /**
     * A repository emptied of manifests is out of the catalog but answers
     * with an empty list while it still holds blob links (as Distribution
     * does, and as the OCI conformance suite's "tags list should reflect
     * manifest deletion" expects); once those are gone too it is unknown.
     */
    async list(name, { last, n }) {
      if (!(await exists(storage, layout.catalogEntry(name))) && !(await repositoryHasObjects(storage, name))) {
        throw new RegistryError("NAME_UNKNOWN", "repository name not known to registry", 404, { name });
      }
      if (n === 0) return { tags: [], truncated: false };
      const prefix = layout.tagsPrefix(name);
      const page = await storage.list(prefix, last === undefined ? { limit: n } : { after: `${prefix}/${last}`, limit: n });
      const tags = page.keys.flatMap((key) => {
        const parsed = layout.parseKey(key);
        return parsed.kind === "tagLink" ? [parsed.tag] : [];
      });
      return { tags, truncated: page.truncated };
    },

    async set(name, tag, digest) {
      await writeText(storage, layout.tagLink(name, tag), digest.value);
    },

    async delete(name, tag) {
      const key = layout.tagLink(name, tag);
      const digest = (await readText(storage, key))?.trim();
      if (digest === undefined) throw tagUnknown(tag);
      await storage.delete(key);
      return digest;
    },

    details: (name, options) => tagDetails(storage, name, options),
  };
}
