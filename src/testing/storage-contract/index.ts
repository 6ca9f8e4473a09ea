/**
 * The storage driver contract suite: the behaviour every {@link StorageDriver}
 * must show, as a vitest suite. A driver is done when it passes.
 *
 * ```ts
 * // test/storage/my-driver.test.ts
 * import { describeStorageContract } from "registry-kit/testing";
 * describeStorageContract("my driver", async () => ({ driver: myDriver(), cleanup: async () => {} }));
 * ```
 *
 * The suite talks to the driver through `checked(driver)`, as the registry does,
 * so key validation is tested once, in the wrapper, for every method. Each
 * section of the suite is a module of this folder; they share one
 * `StorageContractContext` (`context.ts`).
 *
 * @module
 */
import { afterEach, beforeEach, describe } from "vitest";
import { checked, type StorageDriver } from "../../storage/driver.js";
import { appendTests } from "./append.js";
import { atomicityTests } from "./atomicity.js";
import { storageContractContext, type StorageContractContext } from "./context.js";
import { deleteTests } from "./delete.js";
import { invalidKeyTests } from "./keys.js";
import { largeStreamTests } from "./large-streams.js";
import { listTests } from "./list.js";
import { moveTests } from "./move.js";
import { oneWriterTests } from "./one-writer.js";
import { rangeTests } from "./ranges.js";
import { redirectTests } from "./redirect.js";
import { writeAndReadTests } from "./read-write.js";
import type { StorageContractOptions, StorageContractSubject } from "./types.js";

export type { LargeStreamStats, StorageContractOptions, StorageContractSubject } from "./types.js";

/**
 * Declare the contract suite for a driver. `setup` runs before every test and
 * must return a fresh, empty driver (a new temp directory, a new bucket prefix).
 */
export function describeStorageContract(
  name: string,
  setup: () => Promise<StorageContractSubject>,
  options: StorageContractOptions = {},
): void {
  describe(`storage contract: ${name}`, () => {
    let subject: StorageContractSubject;
    let store: StorageDriver;

    beforeEach(async () => {
      subject = await setup();
      store = checked(subject.driver);
    });

    afterEach(async () => {
      await subject.driver.close?.();
      await subject.cleanup?.();
    });

    const ctx: StorageContractContext = storageContractContext(() => store);
    writeAndReadTests(ctx);
    rangeTests(ctx);
    appendTests(ctx);
    oneWriterTests(ctx);
    moveTests(ctx);
    deleteTests(ctx);
    listTests(ctx);
    atomicityTests(ctx);
    invalidKeyTests(ctx);
    redirectTests(ctx, options.redirect ?? false);
    largeStreamTests(ctx, options);
  });
}
