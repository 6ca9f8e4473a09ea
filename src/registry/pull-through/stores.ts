/**
 * The pull-through cache as a store wrapper: for a repository a configured
 * prefix covers, manifests, tags and blobs missing below are fetched from the
 * upstream and stored below (in the stores under this wrapper, so the write
 * policies above it never see the cache's own writes); writes to such a
 * repository are refused with 405 unless its upstream allows pushes.
 * Repositories no prefix covers pass straight through. Assembled only when
 * `pullThrough` is configured.
 *
 * @module
 */
import { RegistryError } from "../../oci/errors.js";
import type { StoreWrapper } from "../stores/types.js";
import { proxiedBlobs } from "./blobs.js";
import type { PullThroughSettings } from "./common.js";
import { proxiedManifests } from "./manifests.js";
import type { PullThrough } from "./options.js";

/** The pull-through wrapper of the resolved configuration `pt`. */
export function pullThroughStores(pt: PullThrough, settings: PullThroughSettings): StoreWrapper {
  return (below) => {
    const manifests = proxiedManifests(below, pt, settings);
    const blobs = proxiedBlobs(below, pt, settings);
    return {
      ...below,
      manifests: { ...below.manifests, get: manifests.get },
      tags: { ...below.tags, resolve: manifests.resolve },
      blobs: { ...below.blobs, ...blobs },
      repositories: {
        ...below.repositories,
        async writable(name, call) {
          const up = pt.lookup(name);
          if (up && !up.allowPush) {
            // The registry answers with the route's read methods in `Allow`.
            const message = `repository ${name} is a pull-through cache of an upstream registry; pushes and deletes are disabled`;
            throw new RegistryError("UNSUPPORTED", message, 405, { prefix: up.prefix });
          }
          return below.repositories.writable(name, call);
        },
      },
    };
  };
}
