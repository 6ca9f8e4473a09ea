/**
 * Lazy access to `@peculiar/x509`.
 *
 * `@peculiar/x509` v2 depends on tsyringe, which refuses to load unless a
 * `Reflect.getMetadata` polyfill is present. registry-kit does not make its
 * users install one: before the library is first loaded (by a dynamic import,
 * so that bundling cannot reorder it ahead of the polyfill) a minimal
 * metadata store is installed on `Reflect` — only when none exists, so an
 * application's own `reflect-metadata` wins.
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";

type Key = unknown;
type Target = object;
const store = new WeakMap<Target, Map<PropertyKey | undefined, Map<Key, unknown>>>();

function own(target: Target, prop: PropertyKey | undefined, create: boolean): Map<Key, unknown> | undefined {
  let byProp = store.get(target);
  if (!byProp) {
    if (!create) return undefined;
    store.set(target, (byProp = new Map()));
  }
  let map = byProp.get(prop);
  if (!map && create) byProp.set(prop, (map = new Map()));
  return map;
}

/** Install the minimal `Reflect` metadata API tsyringe needs, unless one is present. */
export function installReflectMetadata(): void {
  const R = Reflect as unknown as Record<string, unknown>;
  if (typeof R.getMetadata === "function") return;
  const getOwnMetadata = (key: Key, target: Target, prop?: PropertyKey) => own(target, prop, false)?.get(key);
  const getMetadata = (key: Key, target: Target, prop?: PropertyKey): unknown => {
    for (let t: Target | null = target; t; t = Object.getPrototypeOf(t) as Target | null) {
      const m = own(t, prop, false);
      if (m?.has(key)) return m.get(key);
    }
    return undefined;
  };
  const defineMetadata = (key: Key, value: unknown, target: Target, prop?: PropertyKey) => {
    own(target, prop, true)!.set(key, value);
  };
  Object.assign(R, {
    getOwnMetadata,
    getMetadata,
    defineMetadata,
    hasOwnMetadata: (key: Key, target: Target, prop?: PropertyKey) => own(target, prop, false)?.has(key) ?? false,
    hasMetadata: (key: Key, target: Target, prop?: PropertyKey) => getMetadata(key, target, prop) !== undefined,
    metadata: (key: Key, value: unknown) => (target: Target, prop?: PropertyKey) => defineMetadata(key, value, target, prop),
  });
}

let loading: Promise<typeof X509> | undefined;

/** Load `@peculiar/x509` (once), installing the metadata polyfill first. */
export function x509(): Promise<typeof X509> {
  if (!loading) {
    installReflectMetadata();
    loading = import("@peculiar/x509");
  }
  return loading;
}

export type { X509 };
