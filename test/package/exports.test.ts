/**
 * The public surface of every subpath, pinned: its runtime names and its
 * type-only names. A change to what registry-kit exports must change this
 * list too, so it is deliberate (and gets a CHANGELOG line). Internals are
 * imported by tests from their source files, never added here to make a
 * test reach them.
 */
import { describe, expect, it } from "vitest";
import { packageJson, publicSubpaths, runtimeNames, typeNames } from "./export-names.js";

const PINNED: Record<string, { values: string[]; types: string[] }> = {
  ".": {
    values: [
      "StorageError", "aclPolicy", "bootstrapAdmin", "checked", "createClient", "createRegistry",
      "createTokenAuthorizer", "createTokenService", "createUserService", "defaultPolicy",
      "generatedKeys", "memoryStorage", "memoryUserStore", "pemKeys", "storageUserStore",
      "storeCredentialCheck",
    ],
    types: [
      "Access", "Authorizer", "ClientOptions", "CredentialCheck", "KeyProvider", "LogEvent",
      "LogHook", "LogLevel", "Principal", "RegistryClient", "RegistryHandler", "RegistryLimits",
      "RegistryOptions", "StorageDriver", "TokenAuthorizerOptions", "TokenServiceOptions",
      "UserServiceOptions", "UserStore",
    ],
  },
  "./registry": {
    values: [
      "API_VERSION", "DEFAULT_MANIFEST_MEDIA_TYPES", "HEADERS", "MEDIA_TYPES", "PROMETHEUS_CONTENT_TYPE",
      "RegistryError", "baseStores", "collectGarbage", "createHealthChecks", "createMetrics", "createRegistry", "deleteRepository", "denied",
      "errorResponse", "expireCachedTags", "healthGate", "healthStatusHandler", "immutableTags", "instrumentHandler", "metricsHandler",
      "quota", "removeAbandonedUploads", "storageHealthCheck", "tagDetails", "verifyBlobs",
    ],
    types: [
      "BaseStoreOptions", "BlobCommit", "BlobContent", "BlobDelete", "BlobInfo", "BlobLinked", "BlobReadOptions", "BlobStore",
      "ByteRange", "CatalogPage", "CounterSeries", "Created", "DeleteRepositoryOptions", "DeleteRepositoryReport",
      "Descriptor", "Digest", "DigestAlgorithm", "ErrorCode", "ExpireCachedTagsOptions", "ExpireCachedTagsReport",
      "Family", "GaugeSeries", "GcOptions", "GcReport", "HealthCheckOptions", "HealthChecks", "HistogramSeries",
      "ImmutableTagPatterns", "ImmutableTags", "IndexPlatform", "LayerUrlRules", "ManifestDelete", "ManifestDeleted",
      "ManifestPush", "ManifestStore", "ManifestValidation", "ManifestWrite", "Metrics", "PageAsk", "ParsedManifest",
      "PendingWrite", "PolicyRefusal", "PullThroughOptions", "PullThroughUpstream", "QuarantineInfo", "Quota",
      "QuotaLimits", "QuotaOptions", "QuotaUsage", "ReferencedBlob", "ReferrerDescriptor", "RegistryHandler",
      "RegistryLimits", "RegistryOptions", "RegistryStores", "RemoveAbandonedUploadsOptions",
      "RemoveAbandonedUploadsReport", "RepositoryDelete", "RepositoryStore", "ResolvedTag", "RetentionRule",
      "StoreCall", "StoreWrapper", "StoredManifest", "TagDelete", "TagDetail", "TagDetailsOptions", "TagDetailsPage",
      "TagPage", "TagStore", "UploadAppend", "UploadAppended", "UploadCommit", "UploadSession", "UploadStore",
      "Upstream", "UpstreamBlob", "UpstreamManifest", "UpstreamManifestHead", "VerifyError", "VerifyMismatch",
      "VerifyOptions", "VerifyProgress", "VerifyReport", "WithHeaders", "WritePolicy",
    ],
  },
  "./auth": {
    values: [
      "AuthError", "DEFAULT_ALGORITHMS", "DEFAULT_AUTO_REDIRECT_PATH", "JwtError", "MAX_TOKEN_LENGTH",
      "VerificationKey", "aclPolicy", "bindingClaims", "covers",
      "createBasicAuthorizer", "createJwksHandler", "createTokenAuthorizer", "createTokenService", "createTokenVerifier", "cryptoKeys",
      "decodeJwt", "defaultPolicy", "defaultRules", "formatScope", "generateSigningKeyPem",
      "generatedKeys", "hmacKeys", "htpasswdCheck", "jwkThumbprint", "jwksOf", "libtrustKeyId",
      "libtrustKeyIdOf", "matchesBinding", "memoryCredentials", "parseCertBundle", "parseJwks", "parseScope",
      "pemKeys", "signJwt", "trustStoreFromKeys", "verifiedTokenOf", "verifyToken",
    ],
    types: [
      "Access", "AccessIndex", "AccessPolicy", "AclMatch", "AclRule", "AuthErrorCode", "Authorizer",
      "BasicAuthorizerOptions", "BindingClaims", "CredentialCheck", "CryptoKeysOptions",
      "DecodedJwt", "DefaultPolicyOptions", "GenerateKeyOptions", "GeneratedKeyProvider",
      "HmacKeysOptions", "HtpasswdCheck", "JsonWebKeySet", "JwksKey", "JwsAlgorithm", "JwtErrorCode", "JwtHeader", "KeyPem", "KeyProvider",
      "MemoryCredentials", "MemoryUser", "PemKeysOptions", "Principal", "SignOptions", "SigningKey",
      "TokenAuthorizerOptions", "TokenClaims", "TokenResponseBody", "TokenServiceOptions",
      "TokenVerifier", "TokenVerifierOptions", "TrustOptions", "TrustStore", "VerifiedToken",
    ],
  },
  "./users": {
    values: [
      "DEFAULT_PASSWORD_POLICY", "DEFAULT_SCRYPT", "MAX_PASSWORD_LENGTH", "MAX_USER_ID",
      "USERNAME_LENGTH", "USERNAME_PATTERN", "USER_ERROR_STATUS", "UserStoreError",
      "anyAuthenticator", "basicAuthenticator", "bearerAuthenticator", "bootstrapAdmin", "createAccount",
      "createUserService", "deleteAccount", "hashPassword", "listAccounts", "memoryUserStore", "needsRehash", "resetPassword",
      "setAdministrator", "storageUserStore", "storeCredentialCheck", "verifyPassword",
    ],
    types: [
      "AccountOptions", "Authenticator", "BearerVerifier", "BootstrapAdmin", "MemoryUserStoreOptions", "NewAccount", "NewUser",
      "PasswordPolicy", "PublicUser", "ScryptParams", "StorageUserStoreOptions",
      "StoreCredentialCheck", "StoreCredentialCheckOptions", "UserErrorCode", "UserErrorEntry",
      "UserPage", "UserPatch", "UserQuery", "UserRecord", "UserService", "UserServiceOptions",
      "UserStore", "UserStoreErrorCode",
    ],
  },
  "./events": {
    values: [
      "DISTRIBUTION_ACTIONS", "EVENTS_MEDIA_TYPE", "createNotifier",
    ],
    types: [
      "EventAction", "EventActor", "EventDescriptor", "EventHook", "EventListener", "EventRequest",
      "EventSink", "EventSource", "EventTarget", "Notifier", "NotifierOptions", "RegistryEvent",
      "WebhookEndpoint", "WebhookPost",
    ],
  },
  "./storage": {
    values: [
      "DEFAULT_REDIRECT_SECONDS", "StorageError", "assertValidKey", "bodyChunks", "checked", "discard", "instrumentStorage", "readAll",
      "streamOf", "throwIfAborted",
    ],
    types: [
      "AppendOptions", "ByteRange", "ListOptions", "ListPage", "MoveOptions", "ObjectInfo",
      "RedirectOptions", "StorageBody", "StorageDriver", "StorageErrorCode", "WriteOptions",
    ],
  },
  "./storage/memory": {
    values: [
      "memoryStorage",
    ],
    types: [],
  },
  "./storage/fs": {
    values: [
      "fsStorage",
    ],
    types: [
      "FsStorageOptions",
    ],
  },
  "./storage/s3": {
    values: [
      "s3Storage",
    ],
    types: [
      "S3StorageOptions",
    ],
  },
  "./storage/r2": {
    values: [
      "r2Storage",
    ],
    types: [
      "R2BucketLike", "R2ListPage", "R2MultipartUploadLike", "R2ObjectInfo", "R2ObjectWithBody", "R2Precondition",
      "R2StorageOptions", "R2UploadedPartInfo",
    ],
  },
  "./storage/azure": {
    values: [
      "azureStorage",
    ],
    types: [
      "AzureStorageOptions",
    ],
  },
  "./testing": {
    values: [
      "describeStorageContract", "describeStoreContract", "describeUserStoreContract",
    ],
    types: [
      "LargeStreamStats", "StorageContractOptions", "StorageContractSubject",
    ],
  },
  "./node": {
    values: [
      "BadRequestError", "TlsConfigError", "createNodeListeners", "fileCredentialStore", "htpasswdCredentials", "loadTrustStore",
      "nodeWebhookPost", "ociLayoutStore", "parseHost", "pemKeysFromFiles", "readRootCertBundle", "requestUrl", "serve",
      "toNodeListener", "toRequest", "writeResponse",
    ],
    types: [
      "FetchHandler", "HtpasswdCredentialsOptions", "NodeListener", "NodeListenerOptions", "NodeListeners", "NodeServer", "NodeWebhookPostOptions",
      "PemKeyFiles", "RequestOptions", "RunningServer", "ServeOptions", "ServeTlsOptions",
    ],
  },
  "./client": {
    values: [
      "DEFAULT_TOKEN_LIFETIME_SECONDS", "RegistryClientError", "TokenCache", "Transport", "createClient",
      "memoryCredentialStore", "memoryImageStore", "parseImageReference", "parseManifest", "registryUpstream",
    ],
    types: [
      "ClientOptions", "CredentialStore", "Descriptor", "ImageReference", "LocalImageStore",
      "ParsedManifest", "Platform", "ProgressEvent", "PullOptions", "PullResult", "PushOptions",
      "PushResult", "RegistryClient", "RegistryUpstream", "RegistryUpstreamOptions", "RepeatableRequest", "TransferOptions",
      "UpstreamCredentials",
    ],
  },
  "./ui": {
    values: ["createUi", "memoryEndedSessions", "storageEndedSessions"],
    types: ["EndedSessions", "TagLister", "UiBackend", "UiOptions", "UiUsersApi"],
  },
  "./trust": {
    values: ["createTrust", "signatureTag"],
    types: [
      "AcceptedSignature", "RefusalReason", "RefusedSignature", "SignatureArtifact", "SignatureKind", "SignatureVerdict",
      "SigstoreIdentity", "SigstoreOptions", "Trust", "TrustOptions", "VerdictPlace", "VerifyInput",
    ],
  },
  "./server": {
    values: [
      "ConfigError", "createAllInOne", "managementAudience", "parseConfigText", "resolveConfig",
    ],
    types: [
      "AllInOne", "AllInOneConfig", "AllInOneInfo", "AllInOneOptions", "AzureStorageConfig", "CliLogLevel", "DebugConfig", "FileHealthConfig", "GcScheduleConfig",
      "HealthConfig", "HtpasswdAuthConfig", "HttpHealthConfig", "HttpTlsConfig", "ListenAddress", "NotificationsConfig",
      "PolicyConfig", "ProxyUpstreamConfig", "ResolveInput", "Resolved", "S3StorageConfig", "StorageHealthConfig", "TcpHealthConfig", "TokenAuthConfig",
      "TokenServiceConfig", "UiConfig", "UploadsConfig",
      "UsersConfig", "VerifyScheduleConfig",
    ],
  },
};

describe("public exports", () => {
  it("package.json and the pinned list name the same subpaths", () => {
    expect(publicSubpaths().sort()).toEqual(Object.keys(PINNED).sort());
  });

  // TypeScript's `moduleResolution: node10` ignores `exports`: typesVersions gives it the types.
  it("typesVersions maps every subpath to its declarations in dist/", () => {
    const subpaths = publicSubpaths().filter((s) => s !== ".");
    const expected = Object.fromEntries(subpaths.map((s) => [s.slice(2), [`./dist/${s.slice(2)}/index.d.ts`]]));
    expect(packageJson().typesVersions).toEqual({ "*": expected });
  });

  it.each(Object.keys(PINNED))("%s exports exactly the pinned names", async (subpath) => {
    expect(await runtimeNames(subpath), "runtime names").toEqual(PINNED[subpath]!.values);
    expect(typeNames(subpath), "type-only names").toEqual(PINNED[subpath]!.types);
  });
});
