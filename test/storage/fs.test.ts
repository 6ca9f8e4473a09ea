import { pbkdf2 } from "node:crypto";
import { writeFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile, mkdir, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageError, checked, type StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { describeStorageContract } from "../../src/testing/index.js";

const MiB = 1024 * 1024;
const encoder = new TextEncoder();

describeStorageContract(
  "fs",
  async () => {
    const root = await mkdtemp(path.join(tmpdir(), "registry-kit-fs-"));
    return { driver: fsStorage({ root }), cleanup: () => rm(root, { recursive: true, force: true }) };
  },
  {
    onLargeStreamStats: (s) => {
      // Printed for docs/performance.md; not asserted.
      process.stdout.write(
        `fs large stream ${s.phase}: ${(s.bytes / MiB).toFixed(0)} MiB in ${s.milliseconds.toFixed(0)} ms, ` +
          `${(s.bytesPerSecond / MiB).toFixed(0)} MiB/s, RSS growth ${(s.rssGrowth / MiB).toFixed(1)} MiB\n`,
      );
    },
  },
);

describeStorageContract(
  "fs without fsync",
  async () => {
    const root = await mkdtemp(path.join(tmpdir(), "registry-kit-fs-nosync-"));
    return { driver: fsStorage({ root, fsync: false }), cleanup: () => rm(root, { recursive: true, force: true }) };
  },
  { largeBytes: 16 * MiB },
);

describeStorageContract(
  "fs with stats on the thread pool",
  async () => {
    const root = await mkdtemp(path.join(tmpdir(), "registry-kit-fs-poolstat-"));
    return { driver: fsStorage({ root, fsync: false, statOnEventLoop: false }), cleanup: () => rm(root, { recursive: true, force: true }) };
  },
  { largeBytes: 16 * MiB },
);

describe("fs driver specifics", () => {
  let root: string;
  let raw: StorageDriver;
  let store: StorageDriver;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "registry-kit-fs-"));
    raw = fsStorage({ root });
    store = checked(raw);
  });

  afterEach(async () => {
    await raw.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("reads are byte streams: a BYOB reader reusing one small buffer gets exactly the range", async () => {
    const data = new Uint8Array(3 * MiB + 123).map((_, i) => (i * 7) & 0xff);
    await store.write("blob", data);
    const stream = await store.read("blob", { offset: 5, length: 2 * MiB + 7 });
    const reader = stream!.getReader({ mode: "byob" });
    const got: number[] = [];
    let buffer = new ArrayBuffer(64 * 1024);
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (done) break;
      for (const b of value!) got.push(b);
      buffer = value!.buffer as ArrayBuffer; // the same memory, handed back
    }
    expect(got.length).toBe(2 * MiB + 7);
    // Compared natively: toEqual walks 2 MiB element by element (~30 s on 2 cores).
    expect(Buffer.compare(new Uint8Array(got), data.subarray(5, 5 + 2 * MiB + 7))).toBe(0);
  });

  /** Every file under root, relative, `/`-separated. */
  async function files(): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) out.push(path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));
    }
    // The processes' lock holder files are not objects (see writer-lock.ts).
    return out.filter((f) => !f.startsWith("~writers/")).sort();
  }

  it("stores a key as the file root/key, with no temp file left", async () => {
    await store.write("repositories/library/alpine/_layers/sha256/abc/link", encoder.encode("sha256:abc"));
    expect(await files()).toEqual(["repositories/library/alpine/_layers/sha256/abc/link"]);
    expect(await readFile(path.join(root, "repositories/library/alpine/_layers/sha256/abc/link"), "utf8")).toBe("sha256:abc");
    expect(await readdir(path.join(root, "~tmp"))).toEqual([]);
  });

  it("leaves no temp file after an aborted write", async () => {
    await store.write("k/obj", encoder.encode("old"));
    const controller = new AbortController();
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (++pulls === 20) controller.abort();
        c.enqueue(new Uint8Array(256 * 1024));
      },
    });
    await expect(store.write("k/obj", body, { signal: controller.signal })).rejects.toMatchObject({ code: "aborted" });
    expect(await readdir(path.join(root, "~tmp"))).toEqual([]);
    expect(await files()).toEqual(["k/obj"]);
    expect(await readFile(path.join(root, "k/obj"), "utf8")).toBe("old");
  });

  it("never shows a partial file under the final name while a write is in progress", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 4) await gate;
        if (sent === 8) return c.close();
        sent++;
        c.enqueue(new Uint8Array(512 * 1024).fill(sent));
      },
    });
    const writing = store.write("p/obj", body);
    while (sent < 4) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    // Half the body is on disk, in the temp directory only.
    expect(await stat(path.join(root, "p/obj")).catch(() => undefined)).toBeUndefined();
    expect(await store.stat("p/obj")).toBeUndefined();
    const temps = await readdir(path.join(root, "~tmp"));
    expect(temps).toHaveLength(1);
    expect((await store.list("p")).keys).toEqual([]);
    release();
    expect(await writing).toBe(4 * MiB);
    expect((await stat(path.join(root, "p/obj"))).size).toBe(4 * MiB);
    expect(await readdir(path.join(root, "~tmp"))).toEqual([]);
  });

  it("leaves no partial file when the body fails, and removes the temp file", async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ === 10) return c.error(new Error("connection reset"));
        c.enqueue(new Uint8Array(300 * 1024));
      },
    });
    await expect(store.write("f/obj", body)).rejects.toBeInstanceOf(StorageError);
    expect(await files()).toEqual([]);
    expect(await readdir(path.join(root, "~tmp"))).toEqual([]);
  });

  it("undoes a failed append, so the file keeps its size", async () => {
    await store.append("u/data", encoder.encode("12345"));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ === 3) return c.error(new Error("gone"));
        c.enqueue(new Uint8Array(2 * MiB));
      },
    });
    await expect(store.append("u/data", body, { expectedSize: 5 })).rejects.toMatchObject({ code: "io" });
    expect((await stat(path.join(root, "u/data"))).size).toBe(5);
    // A failed first append leaves no file at all.
    await expect(store.append("u/fresh", body)).rejects.toBeInstanceOf(Error);
    expect(await files()).toEqual(["u/data"]);
  });

  it("keeps every path inside the root (defence in depth behind checked)", async () => {
    // The raw driver, without checked: the containment check still refuses an escape.
    await expect(raw.write("../escape", encoder.encode("x"))).rejects.toMatchObject({ code: "invalid_key" });
    await expect(raw.stat("a/../../escape")).rejects.toMatchObject({ code: "invalid_key" });
    await expect(raw.read("/etc/passwd")).resolves.toBeUndefined(); // resolves inside root: root/etc/passwd
    await expect(raw.list("..")).rejects.toMatchObject({ code: "invalid_key" });
    await expect(raw.deletePrefix("..")).rejects.toMatchObject({ code: "invalid_key" });
    await expect(raw.deletePrefix(".")).rejects.toMatchObject({ code: "invalid_key" });
    expect(await stat(path.join(root, "..", "escape")).catch(() => undefined)).toBeUndefined();
    expect(await stat(root)).toBeDefined();
  });

  it("does not follow a symlink planted under the root", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "registry-kit-outside-"));
    try {
      await writeFile(path.join(outside, "secret"), "secret");
      await mkdir(path.join(root, "s"), { recursive: true });
      await symlink(path.join(outside, "secret"), path.join(root, "s", "link"));
      expect(await store.stat("s/link")).toBeUndefined();
      expect(await store.read("s/link")).toBeUndefined();
      expect((await store.list("s")).keys).toEqual([]);
      await expect(store.append("s/link", encoder.encode("x"))).rejects.toBeInstanceOf(StorageError);
      expect(await readFile(path.join(outside, "secret"), "utf8")).toBe("secret");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("removes empty directories after delete, move and deletePrefix", async () => {
    await store.write("d/a/b/c", encoder.encode("1"));
    await store.write("d/x/y", encoder.encode("2"));
    await store.delete("d/a/b/c");
    await store.move("d/x/y", "e/y");
    expect(await readdir(root)).toEqual(expect.arrayContaining(["e", "~tmp"]));
    expect(await readdir(root)).not.toContain("d");
    await store.deletePrefix("e");
    // What is left: the driver's temp directory and its lock holders' (the move took a lock).
    expect((await readdir(root)).sort()).toEqual(["~tmp", "~writers"]);
  });

  it("a write, append or move into a directory that a concurrent delete prunes succeeds (300 rounds each)", async () => {
    // The notifiers' outbox: one process deletes the last delivered object (pruning its directories) while
    // another writes the next one there. Before makeParents retried, about 1 write in 20 failed with ENOENT.
    const other = checked(fsStorage({ root }));
    const one = encoder.encode("1");
    const into: Record<string, (key: string) => Promise<unknown>> = {
      write: (key) => other.write(key, one),
      append: (key) => other.append(key, one, { expectedSize: 0 }),
      move: async (key) => {
        await other.write("staged/o", one);
        return other.move("staged/o", key);
      },
    };
    const failed: string[] = [];
    for (const [op, run] of Object.entries(into)) {
      for (let i = 0; i < 300; i++) {
        await store.write("q/outbox/ci/last", one);
        const [, result] = await Promise.allSettled([store.delete("q/outbox/ci/last"), run(`q/outbox/ci/${op}${i}`)]);
        if (result.status === "rejected") failed.push(`${op} ${i}: ${String(result.reason)}`);
        else expect(await other.stat(`q/outbox/ci/${op}${i}`)).toMatchObject({ size: 1 });
        await other.delete(`q/outbox/ci/${op}${i}`);
      }
    }
    expect(failed).toEqual([]);
  });

  it("writes with fsync on and off give the same files", async () => {
    const other = await mkdtemp(path.join(tmpdir(), "registry-kit-fs-nosync-"));
    try {
      const fast = checked(fsStorage({ root: other, fsync: false }));
      for (const s of [store, fast]) {
        await s.write("x/a", encoder.encode("one"));
        await s.append("x/b", encoder.encode("two"));
        await s.move("x/b", "y/b");
      }
      expect(await readFile(path.join(root, "x/a"), "utf8")).toBe("one");
      expect(await readFile(path.join(other, "x/a"), "utf8")).toBe("one");
      expect(await readFile(path.join(root, "y/b"), "utf8")).toBe("two");
      expect(await readFile(path.join(other, "y/b"), "utf8")).toBe("two");
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it("a read stream is a snapshot: an overwrite during the read does not change it", async () => {
    const first = new Uint8Array(3 * MiB).fill(1);
    await store.write("snap/obj", first);
    const stream = (await store.read("snap/obj"))!;
    const reader = stream.getReader();
    const head = await reader.read();
    await store.write("snap/obj", new Uint8Array(3 * MiB).fill(2));
    let size = head.value!.byteLength;
    let allOnes = head.value!.every((b) => b === 1);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      allOnes &&= value.every((b) => b === 1);
    }
    expect(size).toBe(3 * MiB);
    expect(allOnes).toBe(true);
  });

  it("a key that is an object cannot also be a prefix: conflict", async () => {
    await store.write("c/a", encoder.encode("file"));
    await expect(store.write("c/a/b", encoder.encode("x"))).rejects.toMatchObject({ code: "conflict" });
    await expect(store.append("c/a/b", encoder.encode("x"))).rejects.toMatchObject({ code: "conflict" });
    await store.write("c/d/e", encoder.encode("x"));
    await expect(store.write("c/d", encoder.encode("x"))).rejects.toMatchObject({ code: "conflict" });
    await expect(store.append("c/d", encoder.encode("x"))).rejects.toMatchObject({ code: "conflict" });
    expect(await readdir(path.join(root, "~tmp"))).toEqual([]);
  });

  it("removes stale temp files left by a crash when it starts", async () => {
    await raw.close?.();
    const stale = path.join(root, "~tmp", "crashed-write");
    const fresh = path.join(root, "~tmp", "running-write");
    await writeFile(stale, "partial");
    await writeFile(fresh, "partial");
    const old = new Date(Date.now() - 48 * 3600_000);
    await utimes(stale, old, old);
    const again = fsStorage({ root });
    await again.close?.();
    expect(await readdir(path.join(root, "~tmp"))).toEqual(["running-write"]);
  });

  it("concurrent appends without expectedSize: each lands whole or fails with conflict, never interleaved", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => store.append("ser/data", encoder.encode(`[${String(i).padStart(2, "0")}]`))),
    );
    const landed = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "conflict" });
    expect(landed.length).toBeGreaterThanOrEqual(1);
    const text = await readFile(path.join(root, "ser/data"), "utf8");
    expect(text).toHaveLength(4 * landed.length);
    expect(text.match(/\[\d\d\]/g)?.map((m) => Number(m.slice(1, 3))).sort((a, b) => a - b)).toEqual(landed);
    // The one-writer lock is gone once they all settled: the next append goes through.
    expect(await store.append("ser/data", encoder.encode("!"))).toBe(4 * landed.length + 1);
  });

  it("appends past the early-sync size (background fdatasync) keep every byte, and the object can be moved or removed at once", async () => {
    const chunk = new Uint8Array(16 * 1024 * 1024).map((_, i) => i % 251);
    const { createHash } = await import("node:crypto");
    const hash = createHash("sha256");
    for (let i = 0; i < 5; i++) {
      chunk[0] = i;
      hash.update(chunk);
      expect(await store.append("up/big", chunk.slice(), { expectedSize: i * chunk.length })).toBe((i + 1) * chunk.length);
    }
    // A background sync may still run: moving (which fsyncs again) must not wait on or trip over it.
    await store.move("up/big", "blobs/big");
    expect(createHash("sha256").update(await readFile(path.join(root, "blobs/big"))).digest("hex")).toBe(hash.digest("hex"));
    // Appends that start a background sync, then the upload removed at once: no stray errors.
    for (let i = 0; i < 5; i++) await store.append("gone/data", chunk, { expectedSize: i * chunk.length });
    await store.deletePrefix("gone");
    for (let i = 0; i < 5; i++) await store.append("gone2/data", chunk, { expectedSize: i * chunk.length });
    await store.delete("gone2/data");
    expect(await store.stat("gone/data")).toBeUndefined();
    expect(await store.stat("gone2/data")).toBeUndefined();
  });

  for (const statOnEventLoop of [true, false]) {
    it(`stat (${statOnEventLoop ? "on the event loop" : "on the thread pool"}): a key below an object or a prefix is no object; a stat asked after a change in the same turn sees it`, async () => {
      const driver = checked(fsStorage({ root: path.join(root, "modes"), statOnEventLoop }));
      await driver.write("o", encoder.encode("abc"));
      await driver.write("p/q", encoder.encode("x"));
      // ENOTDIR (a path through a file) and a directory both read as "no object", not as an error.
      expect(await driver.stat("o/below")).toBeUndefined();
      expect(await driver.stat("p")).toBeUndefined();
      expect(await driver.stat("missing/key")).toBeUndefined();
      // Stats of one turn share one lstat, made after all of them were asked: the one asked after the file changed sees the change.
      const before = driver.stat("o");
      writeFileSync(path.join(root, "modes", "o"), "abcdef");
      const after = driver.stat("o");
      expect((await after)?.size).toBe(6);
      expect((await before)?.size).toBe(6);
      // Each caller gets its own object.
      const [x, y] = await Promise.all([driver.stat("o"), driver.stat("o")]);
      expect(x).not.toBe(y);
      expect(x).toEqual(y);
      await driver.close?.();
    });
  }

  it("a stat on the event loop does not wait for a busy thread pool; with statOnEventLoop: false it does", async () => {
    const order = async (statOnEventLoop: boolean): Promise<string[]> => {
      const driver = checked(fsStorage({ root: path.join(root, `busy-${statOnEventLoop}`), statOnEventLoop }));
      await driver.write("o", encoder.encode("abc"));
      const events: string[] = [];
      // Every pool thread busy for ~0.2 s (pbkdf2 runs on libuv's pool), then a stat.
      const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
      const jobs = Array.from({ length: threads }, () => new Promise<void>((resolve, reject) =>
        pbkdf2("pw", "salt", 500_000, 64, "sha512", (error) => (error ? reject(error) : (events.push("pool job"), resolve())))));
      const stat = driver.stat("o").then((info) => void events.push(`stat ${info?.size}`));
      await Promise.all([...jobs, stat]);
      await driver.close?.();
      return events;
    };
    expect((await order(true))[0]).toBe("stat 3");
    expect((await order(false))[0]).toBe("pool job");
  });

  it("a root that cannot be created fails every call with a StorageError", async () => {
    await writeFile(path.join(root, "plain-file"), "x");
    const broken = checked(fsStorage({ root: path.join(root, "plain-file", "sub") }));
    await expect(broken.stat("a/b")).rejects.toBeInstanceOf(StorageError);
    // Again, and several at once: each call fails too. (That a failed stat leaves no entry in the driver's
    // shared-stat map is not visible through the driver: the same failure comes either way.)
    const again = await Promise.allSettled([broken.stat("a/b"), broken.stat("a/b"), broken.stat("a/c")]);
    expect(again.map((r) => r.status === "rejected" && r.reason instanceof StorageError)).toEqual([true, true, true]);
    await expect(broken.write("a/b", encoder.encode("x"))).rejects.toBeInstanceOf(StorageError);
    await broken.close?.();
  });

  it("recreates the temp directory if it was removed by hand", async () => {
    await store.write("t/a", encoder.encode("1"));
    await rm(path.join(root, "~tmp"), { recursive: true });
    await store.write("t/b", encoder.encode("2"));
    expect(await files()).toEqual(["t/a", "t/b"]);
  });
});

describe("fs driver: the one-writer lock across processes", () => {
  let root: string;
  let store: StorageDriver;
  const lockOf = (key: string): string => path.join(root, key + "~writer");
  const plant = (key: string, holder: object): Promise<void> => writeFile(lockOf(key), JSON.stringify(holder));

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "rk-fs-lock-"));
    store = checked(fsStorage({ root, fsync: false, staleLockMs: 60_000 }));
    await store.append("up/data", encoder.encode("abc"));
  });
  afterEach(async () => {
    await store.close?.();
    await rm(root, { recursive: true, force: true });
  });

  it("a lock held by a live process refuses appends and moves with conflict, and lists nothing extra", async () => {
    // The parent of this test runner is alive and is not us.
    await plant("up/data", { host: (await import("node:os")).hostname(), pid: process.ppid, process: "other", nonce: "n1" });
    await expect(store.append("up/data", encoder.encode("x"), { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.move("up/data", "blob/data", { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    expect((await store.list("up")).keys).toEqual(["up/data"]);
    expect(await readFile(path.join(root, "up/data"), "utf8")).toBe("abc");
  });

  it("a lock left by a dead process on this host is taken over at once", async () => {
    await plant("up/data", { host: (await import("node:os")).hostname(), pid: 2 ** 22 + 12345, process: "gone", nonce: "n2" });
    expect(await store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).toBe(4);
    await store.move("up/data", "blob/data", { expectedSize: 4 });
    expect(await readFile(path.join(root, "blob/data"), "utf8")).toBe("abcd");
    expect(await readdir(path.join(root, "up")).catch(() => [])).toEqual([]);
  });

  it("a lock with this pid but another process id (a restart that reused the pid) is taken over", async () => {
    await plant("up/data", { host: (await import("node:os")).hostname(), pid: process.pid, process: "before-restart", nonce: "n3" });
    expect(await store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).toBe(4);
  });

  it("a lock of another host holds until it is older than staleLockMs", async () => {
    await plant("up/data", { host: "elsewhere.invalid", pid: 1, process: "x", nonce: "n4" });
    await expect(store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    const old = new Date(Date.now() - 61_000);
    await utimes(lockOf("up/data"), old, old);
    expect(await store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).toBe(4);
  });

  it("a lock file with no readable holder is stale after a few seconds, not before", async () => {
    await writeFile(lockOf("up/data"), "");
    await expect(store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    const old = new Date(Date.now() - 6_000);
    await utimes(lockOf("up/data"), old, old);
    expect(await store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).toBe(4);
  });

  /** An append whose body waits for `release()` after its first byte, and a wait until it holds the lock. */
  async function heldAppend(): Promise<{ done: Promise<number>; release: () => void }> {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (step++ === 0) return controller.enqueue(encoder.encode("x"));
        await gate;
        controller.close();
      },
    }, { highWaterMark: 0 });
    const done = store.append("up/data", body, { expectedSize: 3 });
    for (let i = 0; i < 500 && !(await stat(lockOf("up/data")).then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 10));
    return { done, release };
  }

  it("a held lock is a hard link to this process's one holder file, which stays after the release", async () => {
    const held = await heldAppend();
    const holders = await readdir(path.join(root, "~writers"));
    expect(holders).toHaveLength(1);
    const holder = path.join(root, "~writers", holders[0]!);
    const [lock, file] = [await stat(lockOf("up/data")), await stat(holder)];
    expect(lock.ino).toBe(file.ino);
    expect(file.nlink).toBe(2);
    expect(JSON.parse(await readFile(holder, "utf8"))).toMatchObject({ host: (await import("node:os")).hostname(), pid: process.pid });
    held.release();
    expect(await held.done).toBe(4);
    await expect(stat(lockOf("up/data"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await stat(holder)).nlink).toBe(1);
  });

  it("a release does not remove a lock that is no longer its own (broken and taken by another meanwhile)", async () => {
    const held = await heldAppend();
    // Another host's writer judged ours stale, removed it and took the lock: a different file.
    await rm(lockOf("up/data"));
    await plant("up/data", { host: "elsewhere.invalid", pid: 1, process: "x" });
    held.release();
    await held.done.catch(() => 0);
    expect(JSON.parse(await readFile(lockOf("up/data"), "utf8"))).toMatchObject({ host: "elsewhere.invalid" });
  });

  it("a holder file removed by hand is written again by the next lock", async () => {
    await rm(path.join(root, "~writers"), { recursive: true });
    expect(await store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).toBe(4);
    expect(await readdir(path.join(root, "~writers"))).toHaveLength(1);
  });

  it("the start-up sweep removes the holder files of dead processes that no lock links to, and keeps the rest", async () => {
    const host = (await import("node:os")).hostname();
    const writers = path.join(root, "~writers");
    const dead = { host, pid: 2 ** 22 + 4242, process: "gone" };
    await writeFile(path.join(writers, "dead-unlinked"), JSON.stringify(dead));
    await writeFile(path.join(writers, "dead-linked"), JSON.stringify(dead));
    await mkdir(path.join(root, "other"), { recursive: true });
    await (await import("node:fs/promises")).link(path.join(writers, "dead-linked"), lockOf("other/data"));
    await writeFile(path.join(writers, "alive"), JSON.stringify({ host, pid: process.ppid, process: "parent" }));
    const again = fsStorage({ root, fsync: false });
    await again.close?.();
    const left = (await readdir(writers)).sort();
    expect(left).toContain("dead-linked");
    expect(left).toContain("alive");
    expect(left).not.toContain("dead-unlinked");
  });

  it("two driver instances on one root (two processes' view) exclude each other", async () => {
    const other = checked(fsStorage({ root, fsync: false }));
    const held = await heldAppend();
    await expect(other.move("up/data", "blob/data", { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    held.release();
    expect(await held.done).toBe(4);
    await other.move("up/data", "blob/data", { expectedSize: 4 });
    expect(await readFile(path.join(root, "blob/data"), "utf8")).toBe("abcx");
  });
});
