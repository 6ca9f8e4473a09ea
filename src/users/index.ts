/**
 * User management: the `/api/users` service, the user store contract and its
 * implementations, password hashing, and the credential check the token
 * service uses.
 *
 * @module
 */
export type { PublicUser, UserRecord } from "./record.js";
export { toPublicUser } from "./record.js";
export { MAX_USER_ID, UserStoreError } from "./store.js";
export type { NewUser, UserPage, UserPatch, UserQuery, UserStore, UserStoreErrorCode } from "./store.js";
export { memoryUserStore } from "./memory-store.js";
export type { MemoryUserStoreOptions } from "./memory-store.js";
export { storageUserStore } from "./storage-store.js";
export type { StorageUserStoreOptions } from "./storage-store.js";
export { DEFAULT_SCRYPT, MAX_PASSWORD_LENGTH, hashPassword, needsRehash, verifyPassword } from "./password.js";
export type { ScryptParams } from "./password.js";
export { storeCredentialCheck } from "./credential-check.js";
export type { StoreCredentialCheckOptions } from "./credential-check.js";
