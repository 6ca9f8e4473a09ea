/**
 * What every verifier of `createTrust` shares: the configured keys, notation trust stores and sigstore roots.
 *
 * @module
 */
import type { SigstoreTrust } from "./keyless.js";
import type { PublicKey } from "./keys.js";
import type { TrustStore } from "./notation.js";

/** Everything a verifier of one kind needs. */
export interface TrustContext {
  keys: ReadonlyMap<string, PublicKey>;
  stores: readonly TrustStore[];
  sigstore: SigstoreTrust | undefined;
  now: () => Date;
}
