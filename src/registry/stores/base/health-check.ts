/**
 * The storage check of the health endpoint (a storage-level read).
 *
 * @module
 */
import type { StorageDriver } from "../../../storage/driver.js";
import { registryKitLayout } from "./layout.js";

/**
 * The check of Distribution's `health.storagedriver`: one cheap listing
 * (`list("repositories", { limit: 1 })`, a single `readdir` or ListObjects
 * call). It fails when the driver throws; an empty or missing listing is a
 * working storage (Distribution likewise passes a "path not found").
 */
export function storageHealthCheck(storage: StorageDriver): () => Promise<void> {
  return async () => {
    await storage.list(registryKitLayout.repositoriesPrefix, { limit: 1 });
  };
}
