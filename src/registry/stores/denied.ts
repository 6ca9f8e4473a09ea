/**
 * The refusal a store wrapper throws.
 *
 * @module
 */
import { RegistryError } from "../../oci/errors.js";

/**
 * A 403 `DENIED` with `message` (which skopeo, podman and docker print) and
 * optional machine-readable `detail` for the error body: what a store wrapper
 * throws to refuse a call. The registry answers any `RegistryError` a wrapper
 * throws as itself.
 *
 * @example
 * ```ts
 * const noBigLayers: StoreWrapper = (below) => ({
 *   ...below,
 *   uploads: {
 *     ...below.uploads,
 *     commit: async (name, session, digest, options, call) => {
 *       if (options.size > 1 << 30) throw denied("layers over 1 GiB are not accepted", { size: options.size });
 *       return below.uploads.commit(name, session, digest, options, call);
 *     },
 *   },
 * });
 * ```
 */
export function denied(message: string, detail?: Record<string, unknown>): RegistryError {
  return new RegistryError("DENIED", message, 403, detail ?? null);
}
