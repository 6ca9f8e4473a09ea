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

export type { BaseStoreOptions } from "./context.js";

/** The stores over `driver` (used through `checked()`), keys laid out by `options.layout`. */
export function baseStores(driver: StorageDriver, options: BaseStoreOptions): RegistryStores {
  const ctx: BaseContext = {
    storage: checked(driver),
    layout: options.layout ?? registryKitLayout,
    uploadLimits: options.uploadLimits,
    uploadMaxAgeMs: options.uploadMaxAgeMs,
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
