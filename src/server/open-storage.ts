/**
 * The storage driver a configuration names, and its line in the banner;
 * shared by `serve` (through `createAllInOne()`), `gc` and `verify`.
 *
 * @module
 */
import type { StorageDriver } from "../storage/driver.js";
import { azureStorage } from "../storage/azure/index.js";
import { fsStorage } from "../storage/fs/index.js";
import { memoryStorage } from "../storage/memory/index.js";
import { s3Storage } from "../storage/s3/index.js";
import type { AllInOneConfig } from "./config-types.js";

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
