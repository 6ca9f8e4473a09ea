/**
 * The storage contract suite against a real Azure Blob service (Azurite on
 * loopback, from the `azurite` devDependency). Every test gets a fresh root
 * directory in one container; the server is started once for the file.
 */
import { azureStorage } from "../../src/storage/azure/index.js";
import { describeStorageContract } from "../../src/testing/index.js";
import { freshRoot, useAzurite } from "./helpers/azurite.js";

const MiB = 1024 * 1024;
const azurite = useAzurite();

describeStorageContract(
  "azure (Azurite)",
  async () => {
    const root = freshRoot("contract");
    return {
      driver: azureStorage({ ...azurite.options(), rootDirectory: root }),
      cleanup: async () => {
        await azureStorage(azurite.options()).deletePrefix(root);
      },
    };
  },
  {
    largeBytes: 256 * MiB,
    redirect: true,
    onLargeStreamStats: (s) =>
      console.log(`[azure contract] ${s.phase} ${Math.round(s.bytes / MiB)} MiB: ${(s.bytesPerSecond / MiB).toFixed(0)} MiB/s, rss +${(s.rssGrowth / MiB).toFixed(1)} MiB`),
  },
);
