/**
 * User management: the `/api/users` service, the user store contract and its
 * implementations, password hashing, and the credential check the token
 * service uses.
 *
 * @module
 */
export type { PublicUser, UserRecord } from "./record.js";
export { MAX_USER_ID, UserStoreError } from "./store.js";
export type { NewUser, UserPage, UserPatch, UserQuery, UserStore, UserStoreErrorCode } from "./store.js";
export { memoryUserStore } from "./memory-store.js";
export type { MemoryUserStoreOptions } from "./memory-store.js";
export { storageUserStore } from "./storage-store.js";
export type { StorageUserStoreOptions } from "./storage-store.js";
export { DEFAULT_SCRYPT, MAX_PASSWORD_LENGTH, hashPassword, needsRehash, verifyPassword } from "./password.js";
export type { ScryptParams } from "./password.js";
export { storeCredentialCheck } from "./credential-check.js";
export type { StoreCredentialCheck, StoreCredentialCheckOptions } from "./credential-check.js";
export { createUserService } from "./service.js";
export type { UserService, UserServiceOptions } from "./service.js";
export { anyAuthenticator, basicAuthenticator, bearerAuthenticator } from "./authenticate.js";
export type { Authenticator, BearerVerifier } from "./authenticate.js";
export { bootstrapAdmin } from "./bootstrap.js";
export { createAccount, deleteAccount, listAccounts, resetPassword, setAdministrator } from "./accounts.js";
export type { AccountOptions, NewAccount } from "./accounts.js";
export type { BootstrapAdmin } from "./bootstrap.js";
export { USER_ERROR_STATUS } from "./errors.js";
export type { UserErrorCode, UserErrorEntry } from "./errors.js";
export { DEFAULT_PASSWORD_POLICY, USERNAME_LENGTH, USERNAME_PATTERN } from "./validation.js";
export type { PasswordPolicy } from "./validation.js";
