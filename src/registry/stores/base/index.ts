/**
 * The base stores: the one implementation of {@link RegistryStores} over a
 * storage driver and a key layout. This folder is the storage level of the
 * registry: only its modules build storage keys or call the driver
 * (test/architecture/imports.test.ts enforces it).
 *
 * @module
 */
import { checked, type StorageDriver } from "../../../storage/driver.js";
import type { RegistryStores } from "../types.js";
import { baseBlobs } from "./blobs.js";
import type { BaseContext, BaseStoreOptions } from "./context.js";
import { registryKitLayout } from "./layout.js";
import { baseManifests } from "./manifests.js";
import { baseRepositories } from "./repositories.js";
import { baseTags } from "./tags.js";
import { baseUploads } from "./uploads.js";
import { resolveUploadLimits } from "./upload-limits.js";

export type { BaseStoreOptions } from "./context.js";

/**
 * The registry's stores over `driver` (used through `checked()`), with no
 * feature around them: what `createRegistry` wraps its features around, and
 * what a store wrapper's tests can wrap (see `describeStoreContract` in
 * `registry-kit/testing`). Throws `TypeError` for an invalid limit.
 *
 * @example
 * ```ts
 * const stores = baseStores(memoryStorage());
 * await stores.tags.list("team/app", { n: 100 }, {}); // NAME_UNKNOWN until something is pushed
 * ```
 */
export function baseStores(driver: StorageDriver, options: BaseStoreOptions = {}): RegistryStores {
  const ctx: BaseContext = {
    storage: checked(driver),
    layout: registryKitLayout,
    uploadLimits: resolveUploadLimits(options.limits),
    uploadMaxAgeMs: (options.limits?.uploadMaxAgeSeconds ?? 24 * 3600) * 1000,
    liveHashers: new Map(),
  };
  return {
    blobs: baseBlobs(ctx),
    manifests: baseManifests(ctx),
    tags: baseTags(ctx),
    uploads: baseUploads(ctx),
    repositories: baseRepositories(ctx),
  };
}
