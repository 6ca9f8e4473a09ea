/**
 * What every section of the storage contract works with: the driver of the
 * running test and a few shorthands over it.
 *
 * @module
 */
import type { ByteRange, StorageDriver } from "../../storage/driver.js";
import { collect, decoder, encoder } from "./streams-fixtures.js";

/**
 * The shared state of the contract sections. `store` is a new driver for every
 * test (set by the suite's `beforeEach`), so sections read it inside their
 * tests, never when they declare them.
 */
export interface StorageContractContext {
  /** The driver under test, behind `checked()` as the registry uses it. */
  readonly store: StorageDriver;
  /** The bytes of `key` (or of a range of it), `undefined` when there is no object. */
  read(key: string, range?: ByteRange): Promise<Uint8Array | undefined>;
  /** Like {@link StorageContractContext.read}, decoded as UTF-8. */
  readText(key: string, range?: ByteRange): Promise<string | undefined>;
  /** Write `text` (UTF-8) to `key`; answers the size written. */
  put(key: string, text: string): Promise<number>;
}

/** A context over `current()`, the driver of the running test. */
export function storageContractContext(current: () => StorageDriver): StorageContractContext {
  const read = async (key: string, range?: ByteRange): Promise<Uint8Array | undefined> => {
    const stream = await current().read(key, range);
    return stream && collect(stream);
  };
  return {
    get store() {
      return current();
    },
    read,
    async readText(key, range) {
      const data = await read(key, range);
      return data && decoder.decode(data);
    },
    put: (key, text) => current().write(key, encoder.encode(text)),
  };
}
