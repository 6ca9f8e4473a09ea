/**
 * Small storage helpers for the registry's own bookkeeping objects (links,
 * metadata, markers), which are tiny and read whole. Blob bytes never go
 * through here.
 *
 * @module
 */
import type { ListOptions, ObjectInfo, StorageDriver } from "../../../storage/driver.js";
import { readAll } from "../../../util/streams.js";
import { catalogEntry } from "./layout.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Largest bookkeeping object read whole; anything bigger is corrupt. */
const SMALL_OBJECT_LIMIT = 1 << 20;

/** Read a small object whole, or `undefined` when it does not exist. */
export async function readSmall(storage: StorageDriver, key: string, limit = SMALL_OBJECT_LIMIT): Promise<Uint8Array | undefined> {
  const stream = await storage.read(key);
  if (!stream) return undefined;
  return readAll(stream, limit, () => new Error(`storage object ${key} is larger than ${limit} bytes`));
}

/** Read a small UTF-8 object. */
export async function readText(storage: StorageDriver, key: string): Promise<string | undefined> {
  const bytes = await readSmall(storage, key);
  return bytes && decoder.decode(bytes);
}

/** Read a small JSON object. */
export async function readJson<T>(storage: StorageDriver, key: string): Promise<T | undefined> {
  const text = await readText(storage, key);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

/** Write a small UTF-8 object. */
export async function writeText(storage: StorageDriver, key: string, text: string): Promise<void> {
  await storage.write(key, encoder.encode(text));
}

/** Write a small JSON object. */
export async function writeJson(storage: StorageDriver, key: string, value: unknown): Promise<void> {
  await writeText(storage, key, JSON.stringify(value));
}

/** True when the object exists. */
export async function exists(storage: StorageDriver, key: string): Promise<boolean> {
  return (await storage.stat(key)) !== undefined;
}

/** Record `name` in the repository index used by the catalog; resolves to whether it was new. */
export async function ensureRepository(storage: StorageDriver, name: string): Promise<boolean> {
  const key = catalogEntry(name);
  if (await exists(storage, key)) return false;
  await writeText(storage, key, name);
  return true;
}

/** Every key under `prefix`, page by page (bounded memory per page). */
export async function* eachKey(storage: StorageDriver, prefix: string, pageSize = 1000): AsyncGenerator<string> {
  let after: string | undefined;
  for (;;) {
    const page = await storage.list(prefix, after === undefined ? { limit: pageSize } : { after, limit: pageSize });
    for (const key of page.keys) yield key;
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || last === undefined) return;
    after = last;
  }
}

/**
 * Every key under `prefix` with the size and time its listing gave, where the
 * driver gives them ({@link ListOptions.info}); `info` is `undefined` where it
 * did not, and the caller stats that key if it needs to know.
 */
export async function* eachEntry(storage: StorageDriver, prefix: string, pageSize = 1000): AsyncGenerator<{ key: string; info: ObjectInfo | undefined }> {
  let after: string | undefined;
  for (;;) {
    const page = await storage.list(prefix, after === undefined ? { limit: pageSize, info: true } : { after, limit: pageSize, info: true });
    for (let i = 0; i < page.keys.length; i++) yield { key: page.keys[i]!, info: page.info?.[i] };
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || last === undefined) return;
    after = last;
  }
}

export { mapLimited } from "../../../util/map-limited.js";
