/**
 * The access each route needs, exactly as CNCF Distribution derives it; the
 * token authorizer turns it into the `scope=` of a challenge.
 *
 * @module
 */
import type { Access } from "../auth/access.js";
import type { Digest } from "../oci/digest.js";
import type { Route } from "./router.js";

/** Access to one repository. */
export function repositoryAccess(name: string, ...actions: string[]): Access {
  return { type: "repository", name, actions };
}

/** The access `/v2/_catalog` needs. */
export const CATALOG_ACCESS: Access = { type: "registry", name: "catalog", actions: ["*"] };

/** A validated cross-repository mount request. */
export interface MountRequest {
  digest: Digest;
  from: string;
}

/**
 * The access `method` on `route` needs. `mount` is the validated
 * `?mount=&from=` of an upload POST, which also needs `pull` on `from`.
 */
export function neededAccess(route: Route, method: string, mount?: MountRequest): Access[] {
  switch (route.kind) {
    case "base":
      return [];
    case "catalog":
      return [CATALOG_ACCESS];
    case "tags":
    case "referrers":
      return [repositoryAccess(route.name, "pull")];
    case "manifest":
    case "blob":
      if (method === "DELETE") return [repositoryAccess(route.name, "delete")];
      if (method === "PUT") return [repositoryAccess(route.name, "pull", "push")];
      return [repositoryAccess(route.name, "pull")];
    case "uploads": {
      const needed = [repositoryAccess(route.name, "pull", "push")];
      if (mount) needed.push(repositoryAccess(mount.from, "pull"));
      return needed;
    }
    case "upload":
      if (method === "GET" || method === "HEAD") return [repositoryAccess(route.name, "pull")];
      return [repositoryAccess(route.name, "pull", "push")];
  }
}
