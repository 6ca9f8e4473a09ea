/**
 * The storage driver a configuration names, and its line in the banner;
 * shared by `serve` (through `createAllInOne()`), `gc` and `verify`.
 *
 * @module
 */
import type { StorageDriver } from "../../storage/driver.js";
import { azureStorage } from "../../storage/azure/index.js";
import { fsStorage } from "../../storage/fs/index.js";
import { memoryStorage } from "../../storage/memory/index.js";
import { s3Storage } from "../../storage/s3/index.js";
import type { AllInOneConfig } from "../config/config-types.js";

/** The storage driver a configuration names (shared by `serve` and `gc`). */
export function openStorage(config: Pick<AllInOneConfig, "storage">): StorageDriver {
  const storage = config.storage;
  if (storage.driver === "filesystem") {
    return fsStorage({ root: storage.rootDirectory, ...(storage.statOnEventLoop !== undefined ? { statOnEventLoop: storage.statOnEventLoop } : {}) });
  }
  if (storage.driver === "inmemory") return memoryStorage();
  if (storage.driver === "azure") {
    return azureStorage({
      accountName: storage.accountName,
      accountKey: storage.accountKey,
      container: storage.container,
      ...(storage.realm !== undefined ? { realm: storage.realm } : {}),
      // A service URL written out in the file is the operator's choice, plain http included (an emulator).
      ...(storage.serviceURL !== undefined ? { serviceURL: storage.serviceURL, allowHttp: true } : {}),
      ...(storage.rootDirectory !== undefined ? { rootDirectory: storage.rootDirectory } : {}),
      ...(storage.maxRetries !== undefined ? { maxRetries: storage.maxRetries } : {}),
    });
  }
  return s3Storage({
    bucket: storage.bucket,
    region: storage.region,
    ...(storage.endpoint !== undefined ? { endpoint: storage.endpoint } : {}),
    ...(storage.forcePathStyle !== undefined ? { forcePathStyle: storage.forcePathStyle } : {}),
    accessKeyId: storage.accessKeyId,
    secretAccessKey: storage.secretAccessKey,
    ...(storage.sessionToken !== undefined ? { sessionToken: storage.sessionToken } : {}),
    ...(storage.rootDirectory !== undefined ? { rootDirectory: storage.rootDirectory } : {}),
    ...(storage.partSize !== undefined ? { partSize: storage.partSize } : {}),
    allowHttp: storage.allowHttp,
  });
}

/** The storage line of the banner (never credentials). */
export function describeStorage(storage: AllInOneConfig["storage"]): string {
  if (storage.driver === "filesystem") return `filesystem ${storage.rootDirectory}`;
  if (storage.driver === "inmemory") return "memory";
  if (storage.driver === "azure") {
    const service = storage.serviceURL ?? `https://${storage.accountName}.blob.${storage.realm ?? "core.windows.net"}`;
    return `azure container ${storage.container} at ${service}${storage.rootDirectory ? `, prefix ${storage.rootDirectory}/` : ""}`;
  }
  const endpoint = storage.endpoint ?? `https://s3.${storage.region}.amazonaws.com`;
  return `s3 bucket ${storage.bucket} at ${endpoint}${storage.rootDirectory ? `, prefix ${storage.rootDirectory}/` : ""}`;
}

/**
 * Check at start-up that an S3 bucket can be listed (one ListObjectsV2 of at
 * most one key), so that a missing bucket or refused credentials stop
 * start-up with the reason instead of failing every request later. Other
 * drivers are not checked: a missing filesystem root is an empty registry,
 * as in Distribution.
 */
export async function checkStorageAtStart(storage: StorageDriver, config: Pick<AllInOneConfig, "storage">): Promise<void> {
  const s3 = config.storage;
  if (s3.driver !== "s3") return;
  try {
    await storage.list("repositories", { limit: 1 });
  } catch (error) {
    throw new Error(
      `storage.s3: cannot list the bucket ${JSON.stringify(s3.bucket)} at ${s3.endpoint ?? `https://s3.${s3.region}.amazonaws.com`}: ${(error as Error).message}; ` +
        "create the bucket (registry-kit does not create one), or correct storage.s3.bucket, regionendpoint, region and the credentials",
      { cause: error },
    );
  }
}
