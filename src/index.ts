/**
 * registry-kit: an embeddable container image registry.
 *
 * The root export gathers the factories most users start from; every part also
 * has its own subpath (`registry-kit/registry`, `/auth`, `/users`, `/storage`,
 * `/storage/memory`, `/client`), and Node-only pieces live in
 * `registry-kit/node`, `registry-kit/storage/fs` and `registry-kit/storage/s3`.
 * Everything here runs on any runtime with the Fetch API and WebCrypto.
 *
 * @module
 */
export { createRegistry } from "./registry/index.js";
export type { RegistryHandler, RegistryLimits, RegistryOptions } from "./registry/index.js";
export { createTokenAuthorizer, createTokenService, generatedKeys, pemKeys, defaultPolicy, aclPolicy } from "./auth/index.js";
export type { Access, Authorizer, CredentialCheck, KeyProvider, Principal, TokenAuthorizerOptions, TokenServiceOptions } from "./auth/index.js";
export { createUserService, memoryUserStore, storageUserStore, storeCredentialCheck, bootstrapAdmin } from "./users/index.js";
export type { UserServiceOptions, UserStore } from "./users/index.js";
export { memoryStorage } from "./storage/memory/index.js";
export { StorageError, checked } from "./storage/index.js";
export type { StorageDriver } from "./storage/index.js";
export { createClient } from "./client/index.js";
export type { ClientOptions, RegistryClient } from "./client/index.js";
export type { LogEvent, LogHook, LogLevel } from "./http/log.js";
