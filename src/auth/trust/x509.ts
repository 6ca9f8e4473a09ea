/**
 * Lazy access to `@peculiar/x509`: moved to `src/util/x509.ts` so that `trust/`
 * (which may not import `auth/`) loads it the same way; re-exported here for auth's modules.
 *
 * @module
 */
export { installReflectMetadata, x509, type X509 } from "../../util/x509.js";
