/**
 * `registry-kit/client`: the spec's pull and push flows as a fetch-based
 * client. Runs on any runtime with `fetch`; the OCI layout directory store and
 * the `auths` file credential store are Node-only and live in `registry-kit/node`.
 *
 * ```ts
 * import { createClient, memoryImageStore } from "registry-kit/client";
 * const client = createClient();
 * await client.login("http://127.0.0.1:5000", "admin", password);
 * const store = memoryImageStore();
 * await client.pull("127.0.0.1:5000/library/hello:v1", store);
 * await client.push("127.0.0.1:5000/mirror/hello:v1", store, { name: "v1" });
 * ```
 *
 * @module
 */
export { createClient } from "./client.js";
export type { ClientOptions, ProgressEvent, PullOptions, PullResult, PushOptions, PushResult, RegistryClient, TransferOptions } from "./client.js";
export { memoryCredentialStore, type CredentialStore } from "./credentials.js";
export { RegistryClientError } from "./errors.js";
export { memoryImageStore, type Descriptor, type LocalImageStore } from "./local-store.js";
export { parseManifest, type ParsedManifest, type Platform } from "./manifest.js";
export { parseImageReference, type ImageReference } from "./reference.js";
// RegistryClient.transport exposes the transport and its token cache.
export { DEFAULT_TOKEN_LIFETIME_SECONDS, TokenCache } from "./tokens.js";
export { Transport, type RepeatableRequest } from "./transport.js";
export { registryUpstream, type RegistryUpstream, type RegistryUpstreamOptions, type UpstreamCredentials } from "./upstream.js";
