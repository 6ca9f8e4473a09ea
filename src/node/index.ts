/**
 * `registry-kit/node`: run any registry-kit fetch handler on Node's `http`
 * module, or mount it in Express or Connect. Node-only; the services
 * themselves run anywhere the Fetch API does.
 *
 * ```ts
 * import { serve } from "registry-kit/node";
 * const { url, close } = await serve(registry, { port: 5000 });
 * ```
 *
 * @module
 */
export { toNodeListener, createNodeListeners } from "./listener.js";
export type { FetchHandler, NodeListener, NodeListeners, NodeListenerOptions } from "./listener.js";
export { serve } from "./serve.js";
export type { NodeServer, RunningServer, ServeOptions } from "./serve.js";
export { TlsConfigError } from "./tls.js";
export type { ServeTlsOptions } from "./tls.js";
export { toRequest, requestUrl, BadRequestError } from "./request.js";
export type { RequestOptions } from "./request.js";
export { writeResponse } from "./response.js";
export { parseHost } from "./host.js";

// Node-only pieces of other parts, so that one subpath holds everything that needs Node.
export { ociLayoutStore } from "../client/oci-layout.node.js";
export { fileCredentialStore } from "../client/credentials-file.node.js";
export { pemKeysFromFiles, readRootCertBundle, loadTrustStore } from "../auth/keys/keys.node.js";
export type { PemKeyFiles } from "../auth/keys/keys.node.js";
export { htpasswdCredentials } from "../auth/basic/htpasswd.node.js";
export type { HtpasswdCredentialsOptions } from "../auth/basic/htpasswd.node.js";
export { nodeWebhookPost, type NodeWebhookPostOptions } from "../events/webhook-post.node.js";
