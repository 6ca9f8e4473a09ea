/**
 * Reaching a Node built-in module from runtime-neutral code. The core never
 * imports `node:` modules statically (it must compile and bundle without
 * Node); where a built-in is much faster (hashing, signing), it asks the
 * runtime for it here and falls back to portable code when the answer is no.
 *
 * @module
 */

interface NodeLikeProcess {
  versions?: { node?: string };
  getBuiltinModule?: (id: string) => unknown;
}

const cache = new Map<string, unknown>();

/**
 * The built-in module `id` (e.g. `"node:crypto"`) when the runtime offers
 * `process.getBuiltinModule` (Node 20.16+, and runtimes that mimic it) and the
 * module passes `usable`, else `null`. The answer is cached per id.
 */
export function nodeBuiltin<T>(id: string, usable: (module: Partial<T>) => boolean): T | null {
  if (cache.has(id)) return cache.get(id) as T | null;
  let found: T | null = null;
  const proc = (globalThis as { process?: NodeLikeProcess }).process;
  if (proc?.versions?.node && typeof proc.getBuiltinModule === "function") {
    try {
      const module = proc.getBuiltinModule(id) as Partial<T> | undefined;
      if (module && usable(module)) found = module as T;
    } catch {
      // not a real built-in: the caller falls back to portable code
    }
  }
  cache.set(id, found);
  return found;
}
