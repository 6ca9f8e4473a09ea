/**
 * The store contract suite: the behaviour every set of {@link RegistryStores}
 * must show, whatever wrappers are around the base stores, as a vitest
 * suite. Run it on your own store wrapper over the base stores:
 *
 * ```ts
 * // test/my-wrapper.test.ts
 * import { baseStores } from "registry-kit/registry";
 * import { memoryStorage } from "registry-kit/storage/memory";
 * import { describeStoreContract } from "registry-kit/testing";
 * describeStoreContract("my wrapper", () => myWrapper(baseStores(memoryStorage())));
 * ```
 *
 * Every test gets fresh stores from `setup` and calls them with no request
 * (a wrapper must work without one: garbage collection and the CLI call
 * stores so). The suite pushes into repositories named `contract/…` only.
 * Each section is a module of this folder over one `StoreContractContext`.
 *
 * @module
 */
import { beforeEach, describe } from "vitest";
import type { RegistryStores } from "../../registry/stores/types.js";
import { blobTests } from "./blobs.js";
import { storeContractContext } from "./context.js";
import { manifestTests } from "./manifests.js";

/**
 * Declare the contract suite for the stores `setup` makes; it runs before
 * every test and must return stores over fresh, empty storage.
 */
export function describeStoreContract(name: string, setup: () => RegistryStores | Promise<RegistryStores>): void {
  describe(`store contract: ${name}`, () => {
    let stores: RegistryStores;
    beforeEach(async () => {
      stores = await setup();
    });
    const ctx = storeContractContext(() => stores);
    blobTests(ctx);
    manifestTests(ctx);
  });
}
