/**
 * Memory storage with a test clock for modification times, and a registry and
 * a garbage collection over it (gc, retention and policy tests).
 */
import { collectGarbage, createRegistry, type RegistryOptions } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

export const HOUR = 3600 * 1000;

/**
 * Memory storage whose modification times come from a test clock, so that
 * "uploaded two hours ago" needs no waiting. `delay` makes every call yield,
 * which interleaves a GC with concurrent pushes.
 */
export function clockedStorage(delay = false, options: Partial<RegistryOptions> = {}) {
  const inner = memoryStorage();
  const times = new Map<string, number>();
  const clock = { now: Date.UTC(2025, 0, 1) };
  const pause = () => (delay ? new Promise((r) => setTimeout(r, Math.random() < 0.5 ? 0 : 1)) : Promise.resolve());
  const touch = (key: string) => times.set(key, clock.now);
  const storage: StorageDriver = {
    name: "clocked",
    async stat(key) {
      await pause();
      const info = await inner.stat(key);
      return info && { size: info.size, modified: new Date(times.get(key) ?? clock.now) };
    },
    read: async (key, range) => (await pause(), inner.read(key, range)),
    async write(key, body, options) {
      await pause();
      const size = await inner.write(key, body, options);
      touch(key);
      return size;
    },
    async append(key, body, options) {
      await pause();
      const size = await inner.append(key, body, options);
      touch(key);
      return size;
    },
    async move(from, to) {
      await pause();
      await inner.move(from, to);
      times.set(to, times.get(from) ?? clock.now);
    },
    delete: async (key) => (await pause(), inner.delete(key)),
    deletePrefix: async (prefix) => (await pause(), inner.deletePrefix(prefix)),
    async list(prefix, options) {
      await pause();
      const page = await inner.list(prefix, options);
      // `info` is what `stat` would say: the test clock's times too.
      return page.info ? { ...page, info: page.info.map((info, i) => info && { size: info.size, modified: new Date(times.get(page.keys[i]!) ?? clock.now) }) } : page;
    },
  };
  const registry = createRegistry({ storage, uploadSecret: "gc-test", deleteEnabled: true, ...options });
  const gc = (options: Parameters<typeof collectGarbage>[1] = {}) => collectGarbage(storage, { now: () => new Date(clock.now), ...options });
  return { storage, registry, clock, gc };
}

export async function allKeys(storage: StorageDriver): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of ["blobs", "repositories", "catalog"]) keys.push(...(await storage.list(prefix)).keys);
  return keys;
}

