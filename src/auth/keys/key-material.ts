/**
 * The bytes each signing key was imported from, kept beside the
 * non-extractable CryptoKey so `node-sign.ts` can build its `node:crypto`
 * KeyObject from them. `KeyObject.from()` on a non-extractable CryptoKey is
 * deprecated since Node 24 (DEP0204, printed on the first token) and may
 * become an error; building from the same bytes gives the same key without
 * it. Module-private: nothing here is reachable from the public API, and the
 * bytes live exactly as long as the key (a WeakMap entry).
 *
 * @module
 */

/** What a signing key was imported from. */
export type KeyMaterial = { readonly format: "pkcs8"; readonly der: Uint8Array } | { readonly format: "secret"; readonly bytes: Uint8Array };

const materials = new WeakMap<CryptoKey, KeyMaterial>();

/** Record the bytes `key` was imported from (a private copy). */
export function rememberKeyMaterial(key: CryptoKey, material: KeyMaterial): void {
  materials.set(key, material.format === "pkcs8" ? { format: "pkcs8", der: material.der.slice() } : { format: "secret", bytes: material.bytes.slice() });
}

/** The bytes `key` was imported from, if this library imported it. */
export function keyMaterial(key: CryptoKey): KeyMaterial | undefined {
  return materials.get(key);
}
