import { memoryStorage } from "../../src/storage/memory/index.js";
import { describeStorageContract } from "../../src/testing/index.js";

// The memory driver keeps objects in RAM by design: only the RSS assertion is skipped.
describeStorageContract("memory", async () => ({ driver: memoryStorage() }), { checkMemory: false });
