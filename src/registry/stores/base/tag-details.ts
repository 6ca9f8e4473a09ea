/**
 * The tags of a repository with what the Distribution API does not tell: when
 * each was last pushed (the time its link was written). For pages that sort
 * tags by push time (the web page, retention rules).
 *
 * @module
 */
import type { StorageDriver } from "../../../storage/driver.js";
import { readAll } from "../../../util/streams.js";
import { fromUtf8 } from "../../../util/bytes.js";
import { tagLink, tagsPrefix } from "./layout.js";
import { isValidName, isValidTag } from "../../names.js";
import type { TagDetail, TagDetailsOptions, TagDetailsPage } from "../types.js";

export type { TagDetail, TagDetailsOptions, TagDetailsPage };

/**
 * The tags of repository `name` in lexical order, each with its digest and
 * push time, read from `storage` (the registry's). Tags removed while this
 * runs are left out. Throws `TypeError` for an invalid repository name.
 */
export async function tagDetails(storage: StorageDriver, name: string, options: TagDetailsOptions = {}): Promise<TagDetailsPage> {
  if (!isValidName(name)) throw new TypeError("invalid repository name");
  const prefix = tagsPrefix(name);
  const page = await storage.list(prefix, {
    limit: options.limit ?? 1000,
    ...(options.after !== undefined && isValidTag(options.after) ? { after: tagLink(name, options.after) } : {}),
  });
  const tags: TagDetail[] = [];
  for (const key of page.keys) {
    const tag = key.slice(prefix.length + 1);
    if (!isValidTag(tag)) continue;
    const [info, stream] = await Promise.all([storage.stat(key), storage.read(key)]);
    if (!info || !stream) {
      // Deleted between the two: the stream, if one was opened, is not read.
      await stream?.cancel().catch(() => {});
      continue;
    }
    const digest = fromUtf8(await readAll(stream, 1024)).trim();
    tags.push({ tag, digest, pushedAt: info.modified });
  }
  return { tags, truncated: page.truncated };
}
