/**
 * Test helpers for code built on registry-kit: the contract suites that every
 * implementation of a pluggable interface must pass. Node and vitest only.
 *
 * @module
 */
export { describeStorageContract } from "./storage-contract/index.js";
export type { LargeStreamStats, StorageContractOptions, StorageContractSubject } from "./storage-contract/index.js";
export { describeUserStoreContract } from "./user-store-contract/index.js";
export { describeStoreContract } from "./store-contract/index.js";
