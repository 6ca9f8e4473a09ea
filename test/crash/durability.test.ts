/**
 * What a SIGKILL cannot show: a power loss forgets what was not fsynced. These
 * tests watch the fs driver's fsync calls (file and directory) instead.
 */
import { promises as fsp } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fsStorage } from "../../src/storage/fs/index.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "rk-durable-"));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(root, { recursive: true, force: true });
});

/** Record the paths whose handles get `sync()`ed. */
function watchSyncs(): string[] {
  const synced: string[] = [];
  const open = fsp.open.bind(fsp);
  vi.spyOn(fsp, "open").mockImplementation(async (...args: Parameters<typeof fsp.open>) => {
    const handle: FileHandle = await open(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      synced.push(String(args[0]));
      return sync();
    };
    return handle;
  });
  return synced;
}

describe("fs driver durability", () => {
  it("a write syncs the file and the directory that gained the entry", async () => {
    const storage = fsStorage({ root });
    await storage.write("a/b/c", new Uint8Array([1]));
    const synced = watchSyncs();
    await storage.write("a/b/d", new Uint8Array([2]));
    expect(synced.some((p) => p.startsWith(path.join(root, "~tmp")))).toBe(true);
    expect(synced).toContain(path.join(root, "a", "b"));
  });

  it("a delete syncs the directory it removed the entry from (an acknowledged DELETE survives a power loss)", async () => {
    const storage = fsStorage({ root });
    await storage.write("repo/_manifests/tags/v1", new Uint8Array([1]));
    await storage.write("repo/_manifests/tags/v2", new Uint8Array([1]));
    const synced = watchSyncs();
    await storage.delete("repo/_manifests/tags/v1");
    expect(synced).toContain(path.join(root, "repo", "_manifests", "tags"));
    expect(await storage.stat("repo/_manifests/tags/v1")).toBeUndefined();
  });

  it("appends are not synced one by one; the move that publishes the object syncs its bytes first", async () => {
    const storage = fsStorage({ root });
    await storage.write("uploads/u1/data", new Uint8Array(0));
    const synced = watchSyncs();
    await storage.append("uploads/u1/data", new Uint8Array([1, 2]), { expectedSize: 0 });
    await storage.append("uploads/u1/data", new Uint8Array([3]), { expectedSize: 2 });
    expect(synced).toEqual([]);
    await storage.move("uploads/u1/data", "blobs/b1/data");
    expect(synced[0]).toBe(path.join(root, "uploads", "u1", "data"));
    expect(synced).toContain(path.join(root, "blobs", "b1"));
    expect(new Uint8Array(await new Response(await storage.read("blobs/b1/data")).arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("no directory sync on delete when fsync is off", async () => {
    const storage = fsStorage({ root, fsync: false });
    await storage.write("x/y", new Uint8Array([1]));
    const synced = watchSyncs();
    await storage.delete("x/y");
    expect(synced).toEqual([]);
  });
});
