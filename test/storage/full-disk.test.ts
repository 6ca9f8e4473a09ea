/**
 * A full disk, for real: a tmpfs of a few MiB (helpers/small-fs.ts) filled by a
 * filler file until the kernel answers ENOSPC, then given back exactly the
 * bytes a case needs. The fs driver must report `no_space` and leave nothing
 * behind (free space is compared before and after, to the byte).
 *
 * Needs root (mount). Without it every test here fails with the reason.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, statfs } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageError, checked, type StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { bytes } from "../registry/helpers.js";
import { useSmallFilesystem } from "./helpers/small-fs.js";

const KiB = 1024;
const MiB = 1024 * KiB;

const disk = useSmallFilesystem({ bytes: 4 * MiB });

let root: string;
let raw: StorageDriver;

beforeEach(async () => {
  root = await mkdtemp(path.join(disk.dir, "root-"));
  raw = fsStorage({ root });
});

afterEach(async () => {
  await raw.close?.();
  await disk.release();
  await rm(root, { recursive: true, force: true });
});

/** Every file and directory under `dir`, relative, `/`-separated, directories ending in `/`. */
async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
    out.push(entry.isDirectory() ? rel + "/" : rel);
  }
  return out.sort();
}

/** What the driver's temp directory holds (in-flight writes, lock temps). */
const temps = () => readdir(path.join(root, "~tmp"));

/** Read a stream whole. */
async function readBytes(stream: ReadableStream<Uint8Array> | undefined): Promise<string> {
  if (!stream) return "<no object>";
  return bytesOf(Buffer.from(await new Response(stream).arrayBuffer()));
}

/** Bytes compared as hex digests plus length: vitest's deep equality walks a 1 MiB array for seconds. */
function bytesOf(data: Uint8Array): string {
  return `${data.byteLength} bytes, sha256 ${createHash("sha256").update(data).digest("hex")}`;
}

async function noSpace(promise: Promise<unknown>): Promise<StorageError> {
  const error = await promise.then(
    () => {
      throw new Error("expected the operation to fail with no_space");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageError);
  const storageError = error as StorageError;
  expect(storageError.code).toBe("no_space");
  // The message names no path (the cause keeps it, for logs).
  expect(storageError.message).not.toContain(disk.dir);
  return storageError;
}

describe("fs driver on a full disk", () => {
  let store: StorageDriver;
  beforeEach(() => {
    store = checked(raw);
  });

  it("a write larger than the free space fails with no_space, keeps the old object and leaves no temp file", async () => {
    const old = randomBytes(10 * KiB);
    await store.write("a/obj", old);
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();

    const error = await noSpace(store.write("a/obj", randomBytes(1 * MiB)));
    expect((error.cause as { code?: string }).code).toBe("ENOSPC");

    expect(await readBytes(await store.read("a/obj"))).toBe(bytesOf(old));
    expect(await temps()).toEqual([]);
    expect(await disk.freeBytes()).toBe(free);
  });

  it("a streamed write to a new key fails with no_space and leaves no object, no directory, no temp file", async () => {
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();
    const body = new Blob([randomBytes(512 * KiB), randomBytes(512 * KiB)]).stream();
    await noSpace(store.write("new/deep/obj", body));
    expect(await store.stat("new/deep/obj")).toBeUndefined();
    expect(await entries(root)).toEqual(["~tmp/"]);
    expect(await disk.freeBytes()).toBe(free);
  });

  it("an append that meets a full disk is cut back to the size before it, and continues once space is freed", async () => {
    const first = randomBytes(40 * KiB);
    expect(await store.append("up/data", first, { expectedSize: 0 })).toBe(first.byteLength);
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();

    const second = randomBytes(512 * KiB);
    await noSpace(store.append("up/data", second, { expectedSize: first.byteLength, create: false }));

    // The bytes that did fit were truncated away: same size, same bytes, same free space.
    expect((await store.stat("up/data"))?.size).toBe(first.byteLength);
    expect(await readBytes(await store.read("up/data"))).toBe(bytesOf(first));
    expect(await disk.freeBytes()).toBe(free);
    expect(await temps()).toEqual([]);
    expect(await entries(path.join(root, "up"))).toEqual(["data"]); // no writer lock left

    await disk.release();
    expect(await store.append("up/data", second, { expectedSize: first.byteLength, create: false })).toBe(first.byteLength + second.byteLength);
    expect(await readBytes(await store.read("up/data"))).toBe(bytesOf(Buffer.concat([first, second])));
  });

  it("an append that would create the object and fails leaves no object", async () => {
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();
    await noSpace(store.append("fresh/data", randomBytes(512 * KiB), { expectedSize: 0 }));
    expect(await store.stat("fresh/data")).toBeUndefined();
    expect((await store.list("fresh")).keys).toEqual([]);
    expect(await temps()).toEqual([]);
    expect(await disk.freeBytes()).toBe(free);
  });

  it("with no byte free, the writer lock of an append or a move fails with no_space, and nothing changes", async () => {
    const data = randomBytes(8 * KiB);
    await store.append("up/data", data, { expectedSize: 0 });
    await disk.fill(0);

    const appendError = await noSpace(store.append("up/data", randomBytes(KiB), { expectedSize: data.byteLength, create: false }));
    expect(appendError.message).toContain("lock");
    await noSpace(store.move("up/data", "done/data", { expectedSize: data.byteLength }));

    expect((await store.stat("up/data"))?.size).toBe(data.byteLength);
    expect(await store.stat("done/data")).toBeUndefined();
    expect(await temps()).toEqual([]);
    expect(await entries(path.join(root, "up"))).toEqual(["data"]);
    expect(await disk.freeBytes()).toBe(0);

    await disk.release();
    await store.move("up/data", "done/data", { expectedSize: data.byteLength });
    expect(await readBytes(await store.read("done/data"))).toBe(bytesOf(data));
  });

  it("a file-size limit (EFBIG, RLIMIT_FSIZE set with prlimit) is no_space too, and leaves no temp file", async () => {
    // Node ignores SIGXFSZ, so the kernel's EFBIG reaches the driver. The limit is on this
    // worker process only, and only for the few milliseconds of the write.
    const setLimit = (value: string) => execFileSync("prlimit", ["--pid", String(process.pid), `--fsize=${value}`]);
    const before = execFileSync("prlimit", ["--pid", String(process.pid), "--fsize", "--raw", "--noheadings", "--output=SOFT,HARD"]).toString().trim().split(/\s+/);
    setLimit(`${256 * KiB}:${before[1]}`);
    let error: StorageError;
    try {
      error = await noSpace(store.write("big", randomBytes(1 * MiB)));
    } finally {
      setLimit(`${before[0]}:${before[1]}`);
    }
    expect((error.cause as { code?: string }).code).toBe("EFBIG");
    expect(await store.stat("big")).toBeUndefined();
    expect(await temps()).toEqual([]);
  });
});

describe("out of inodes (ENOSPC from mkdir)", () => {
  // A second tmpfs that runs out of inodes before bytes: there, creating a directory
  // fails with ENOSPC, after the object's bytes were written to a temp file.
  const inodeDisk = useSmallFilesystem({ bytes: 4 * MiB, inodes: 256 });
  let root2: string;
  let raw2: StorageDriver;
  beforeEach(async () => {
    root2 = await mkdtemp(path.join(inodeDisk.dir, "root-"));
    raw2 = fsStorage({ root: root2 });
  });
  afterEach(async () => {
    await raw2.close?.();
    await inodeDisk.release();
    await rm(root2, { recursive: true, force: true });
  });

  it("a write whose directories cannot all be made fails with no_space and leaves no directory and no temp file", async () => {
    const store = checked(raw2);
    await store.write("keep", bytes("kept"));
    // Two inodes: the temp file and the first directory fit, the second directory does not.
    await inodeDisk.exhaustInodes(2);
    await noSpace(store.write("a/b/c/obj", bytes("x")));
    expect(await entries(root2)).toEqual(["keep", "~tmp/"]);
    expect((await statfs(inodeDisk.dir)).ffree).toBe(2);
    await inodeDisk.release();
    await store.write("a/b/c/obj", bytes("x"));
    expect(await store.stat("a/b/c/obj")).toEqual(expect.objectContaining({ size: 1 }));
  });
});
