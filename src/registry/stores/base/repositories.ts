/**
 * The base repository store: the catalog (one marker per repository) and the
 * deletion of a whole repository.
 *
 * @module
 */
import type { RepositoryStore } from "../types.js";
import type { BaseContext } from "./context.js";
import { deleteRepository, forgetIfEmpty } from "./repository-delete.js";

/** The repository store over `ctx`. */
export function baseRepositories(ctx: BaseContext): RepositoryStore {
  const { storage, layout } = ctx;
  return {
    writable: () => Promise.resolve(),
    async catalog({ last, n }) {
      if (n === 0) return { repositories: [], truncated: false };
      const page = await storage.list(layout.catalogPrefix, last === undefined ? { limit: n } : { after: layout.catalogEntry(last), limit: n });
      const repositories = page.keys.flatMap((key) => {
        const parsed = layout.parseKey(key);
        return parsed.kind === "catalogEntry" ? [parsed.name] : [];
      });
      return { repositories, truncated: page.truncated };
    },
    forgetIfEmpty: (name) => forgetIfEmpty(storage, name),
    delete: (name, options, call) => deleteRepository(storage, name, { caller: call.caller, ...options }),
  };
}
