/**
 * A real, small filesystem for full-disk tests: a tmpfs of a few MiB mounted on
 * a temp directory, so that ENOSPC comes from the kernel, not from a mock.
 * Needs root (or CAP_SYS_ADMIN): without it the test FAILS with the mount
 * error, never skips, because a full disk is what the tests are about.
 *
 * ```ts
 * const disk = useSmallFilesystem({ bytes: 4 * 1024 * 1024 });
 * await disk.fill(64 * 1024);   // leave exactly 64 KiB free
 * await disk.release();         // delete the fillers
 * ```
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, open, readdir, rm, rmdir, statfs, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";

const run = promisify(execFile);

export interface SmallFilesystem {
  /** The mount point. */
  readonly dir: string;
  /** Free bytes as an unprivileged writer sees them (`statfs` bavail × bsize). */
  freeBytes(): Promise<number>;
  /** Write a filler file (outside any storage root) until exactly `leave` bytes stay free. */
  fill(leave?: number): Promise<void>;
  /** Create empty filler files until exactly `leave` inodes stay free (mount with `inodes`). */
  exhaustInodes(leave?: number): Promise<void>;
  /** Delete every filler file. */
  release(): Promise<void>;
}

const FILLERS = "fillers";

/** `bytes`: the filesystem's size; `inodes`: how many files and directories it can hold (default: the kernel's, plenty). */
export function useSmallFilesystem(options: { bytes: number; inodes?: number }): SmallFilesystem {
  let dir = "";
  let mounted = false;
  let fillers = 0;

  const disk: SmallFilesystem = {
    get dir() {
      return dir;
    },
    async freeBytes() {
      const s = await statfs(dir);
      return s.bavail * s.bsize;
    },
    async fill(leave = 0) {
      const s = await statfs(dir);
      if (leave % s.bsize !== 0) throw new Error(`leave must be a multiple of the block size ${s.bsize}`);
      const file = path.join(dir, FILLERS, `filler-${fillers++}`);
      await mkdir(path.join(dir, FILLERS), { recursive: true });
      // Write until the kernel says ENOSPC: that is the proof the disk is really full.
      const handle = await open(file, "w");
      const chunk = new Uint8Array(64 * 1024).fill(0x5a);
      let size = 0;
      try {
        for (;;) {
          const { bytesWritten } = await handle.write(chunk, 0, chunk.byteLength, size);
          size += bytesWritten;
        }
      } catch (error) {
        if ((error as { code?: string }).code !== "ENOSPC") throw error;
      } finally {
        await handle.close();
      }
      // Give back whole blocks so that exactly `leave` bytes are free.
      const whole = Math.floor(size / s.bsize) * s.bsize;
      await truncate(file, Math.max(0, whole - leave));
      const free = await disk.freeBytes();
      if (free !== leave) throw new Error(`filled ${dir} to leave ${leave} bytes free, but ${free} are free`);
    },
    async exhaustInodes(leave = 0) {
      const fillerDir = path.join(dir, FILLERS);
      await mkdir(fillerDir, { recursive: true });
      const made: string[] = [];
      // Create files until the kernel says ENOSPC: no inode is left.
      for (;;) {
        const file = path.join(fillerDir, `inode-${fillers++}`);
        try {
          await (await open(file, "wx")).close();
          made.push(file);
        } catch (error) {
          if ((error as { code?: string }).code !== "ENOSPC") throw error;
          break;
        }
      }
      if (made.length < leave) throw new Error(`only ${made.length} inodes were free, ${leave} wanted`);
      for (const file of made.slice(0, leave)) await rm(file);
      const free = (await statfs(dir)).ffree;
      if (free !== leave) throw new Error(`exhausted the inodes of ${dir} to leave ${leave} free, but ${free} are free`);
    },
    async release() {
      await rm(path.join(dir, FILLERS), { recursive: true, force: true });
    },
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "registry-kit-full-disk-"));
    try {
      const inodes = options.inodes === undefined ? "" : `,nr_inodes=${options.inodes}`;
      await run("mount", ["-t", "tmpfs", "-o", `size=${options.bytes},mode=0700${inodes}`, "tmpfs", dir]);
      mounted = true;
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
      await rmdir(dir).catch(() => {});
      throw new Error(
        `the full-disk tests need a real small filesystem: \`mount -t tmpfs -o size=${options.bytes} tmpfs ${dir}\` failed (${stderr}). ` +
          `Run them as root or with CAP_SYS_ADMIN (a container needs --privileged or --cap-add SYS_ADMIN).`,
      );
    }
    // Make sure the mount is what it claims: a fresh filesystem of the requested size.
    if ((await readdir(dir)).length !== 0) throw new Error(`${dir} is not empty after mounting`);
  });

  afterAll(async () => {
    if (!mounted) return;
    try {
      await run("umount", [dir]);
    } catch {
      // A file still open (a failed test's stream): detach now, the kernel frees it on close.
      await run("umount", ["-l", dir]);
    }
    await rmdir(dir);
  });

  return disk;
}
