/**
 * An in-memory storage driver: for tests, examples and throw-away registries.
 * Objects are kept as lists of chunks so that appends never copy what is stored.
 *
 * @module
 */
import { StorageError, type ByteRange, type ListOptions, type ListPage, type MoveOptions, type ObjectInfo, type StorageBody, type StorageDriver, type AppendOptions, type WriteOptions } from "../driver.js";
import { bodyChunks, discard } from "../streams.js";

interface Entry {
  chunks: Uint8Array[];
  size: number;
  modified: Date;
}

/** The state of one memory driver, which every operation below works on. */
interface MemoryState {
  objects: Map<string, Entry>;
  /** Keys with an append in progress: one writer per key, and no move under a writer. */
  appending: Set<string>;
}

/** Create an empty in-memory driver. Every call makes an independent store. */
export function memoryStorage(): StorageDriver {
  const state: MemoryState = { objects: new Map(), appending: new Set() };
  // Every method is async, so a StorageError thrown by an operation is a rejection.
  return {
    name: "memory",
    stat: async (key) => stat(state, key),
    read: async (key, range) => read(state, key, range),
    write: async (key, body, options) => write(state, key, body, options),
    append: async (key, body, options) => append(state, key, body, options),
    move: async (from, to, options) => move(state, from, to, options),
    delete: async (key) => {
      state.objects.delete(key);
    },
    deletePrefix: async (prefix) => deletePrefix(state, prefix),
    list: async (prefix, options) => list(state, prefix, options),
  };
}

function stat(state: MemoryState, key: string): ObjectInfo | undefined {
  const entry = state.objects.get(key);
  return entry && { size: entry.size, modified: entry.modified };
}

function read(state: MemoryState, key: string, range?: ByteRange): ReadableStream<Uint8Array> | undefined {
  const entry = state.objects.get(key);
  if (!entry) return undefined;
  // Snapshot the chunk list: later appends or writes do not change this read.
  const chunks = sliceChunks(entry.chunks, range?.offset ?? 0, range?.length ?? Infinity);
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk.slice());
      else controller.close();
    },
  });
}

async function write(state: MemoryState, key: string, body: StorageBody, options?: WriteOptions): Promise<number> {
  const { chunks, size } = await collect(body, options?.signal);
  state.objects.set(key, { chunks, size, modified: new Date() });
  return size;
}

async function append(state: MemoryState, key: string, body: StorageBody, options?: AppendOptions): Promise<number> {
  const current = state.objects.get(key);
  try {
    checkAppend(state, key, current, options);
  } catch (error) {
    discard(body);
    throw error;
  }
  state.appending.add(key);
  try {
    const { chunks, size } = await collect(body, options?.signal);
    // Re-read after the await: a write or delete may have replaced the object meanwhile.
    const now = state.objects.get(key);
    if (options?.expectedSize !== undefined && (now?.size ?? 0) !== options.expectedSize) {
      throw new StorageError("conflict", `object size is ${now?.size ?? 0}, expected ${options.expectedSize}`);
    }
    if (!now && (current || options?.create === false)) {
      throw new StorageError("conflict", "the object was deleted or does not exist");
    }
    const entry = now ?? { chunks: [], size: 0, modified: new Date() };
    entry.chunks = [...entry.chunks, ...chunks];
    entry.size += size;
    entry.modified = new Date();
    state.objects.set(key, entry);
    return entry.size;
  } finally {
    state.appending.delete(key);
  }
}

/** Throw `conflict` when an append may not start: another is running, or the size or existence is not the expected one. */
function checkAppend(state: MemoryState, key: string, current: Entry | undefined, options?: AppendOptions): void {
  if (state.appending.has(key)) {
    throw new StorageError("conflict", "another append to this object is in progress");
  }
  if ((options?.expectedSize !== undefined && (current?.size ?? 0) !== options.expectedSize) || (!current && options?.create === false)) {
    throw new StorageError("conflict", `object size is ${current?.size ?? 0}, expected ${options.expectedSize}`);
  }
}

function move(state: MemoryState, from: string, to: string, options?: MoveOptions): void {
  const entry = state.objects.get(from);
  if (!entry) throw new StorageError("not_found", "no object to move");
  if (state.appending.has(from)) throw new StorageError("conflict", "an append to the object is in progress");
  if (options?.expectedSize !== undefined && entry.size !== options.expectedSize) {
    throw new StorageError("conflict", `object size is ${entry.size}, expected ${options.expectedSize}`);
  }
  state.objects.delete(from);
  // A fresh entry: nothing that still holds the old one can change what was moved.
  state.objects.set(to, { chunks: entry.chunks, size: entry.size, modified: entry.modified });
}

function deletePrefix(state: MemoryState, prefix: string): void {
  const start = prefix + "/";
  for (const key of [...state.objects.keys()]) if (key.startsWith(start)) state.objects.delete(key);
}

function list(state: MemoryState, prefix: string, options?: ListOptions): ListPage {
  const start = prefix + "/";
  const after = options?.after;
  const limit = options?.limit ?? Infinity;
  const keys = [...state.objects.keys()]
    .filter((key) => key.startsWith(start) && (after === undefined || key > after))
    .sort();
  const page = keys.slice(0, limit);
  const truncated = keys.length > limit;
  if (!options?.info) return { keys: page, truncated };
  return { keys: page, truncated, info: page.map((key) => stat(state, key)) };
}

async function collect(body: StorageBody, signal?: AbortSignal): Promise<{ chunks: Uint8Array[]; size: number }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // bodyChunks gives the shared abort and error rules (see ../streams.ts).
  for await (const chunk of bodyChunks(body, signal)) {
    chunks.push(chunk.slice());
    size += chunk.byteLength;
  }
  return { chunks, size };
}

function sliceChunks(chunks: Uint8Array[], offset: number, length: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let skip = offset;
  let left = length;
  for (const chunk of chunks) {
    if (left <= 0) break;
    if (skip >= chunk.byteLength) {
      skip -= chunk.byteLength;
      continue;
    }
    const part = chunk.subarray(skip, Math.min(chunk.byteLength, skip + left));
    skip = 0;
    left -= part.byteLength;
    if (part.byteLength > 0) out.push(part);
  }
  return out;
}
