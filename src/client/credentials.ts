/**
 * Stored client login (the spec's "Stored client login"): after a login the
 * client keeps `base64(user:password)` per registry address and sends it as the
 * Basic credential to the token endpoint on later pulls and pushes.
 *
 * @module
 */
import { b64, utf8 } from "../util/bytes.js";

/**
 * Where logins are kept, keyed by registry address (`host[:port]`).
 * The value is the `base64(user:password)` string, as in the `auths` JSON files
 * of container tools.
 */
export interface CredentialStore {
  /** The stored `base64(user:password)` of a registry, if any. */
  get(registry: string): Promise<string | undefined>;
  /** Store a registry's `base64(user:password)`. */
  set(registry: string, auth: string): Promise<void>;
  /** Forget a registry's login. */
  delete(registry: string): Promise<void>;
}

/** A credential store that lives in memory. */
export function memoryCredentialStore(initial?: Record<string, string>): CredentialStore {
  const map = new Map(Object.entries(initial ?? {}));
  return {
    async get(registry) {
      return map.get(registry);
    },
    async set(registry, auth) {
      map.set(registry, auth);
    },
    async delete(registry) {
      map.delete(registry);
    },
  };
}

/** `base64(user:password)` with UTF-8, as HTTP Basic wants it. */
export function encodeBasic(username: string, password: string): string {
  return b64(utf8(`${username}:${password}`));
}

/** The key a registry's login is stored under: its `host[:port]`. */
export function registryKey(registry: string | URL): string {
  return new URL(registry).host;
}
