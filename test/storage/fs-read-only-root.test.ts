/**
 * The fs driver over a root this process may not write (issue 43: run as an
 * unprivileged user, as Distribution is, on a registry another user owns):
 * `stat`, `read` and `list` serve what is there; writes fail with the reason.
 * The denial is simulated (the tests run as root, which may write anywhere);
 * test/interop/unprivileged-start.test.ts runs the real thing as `nobody`.
 */
import fs, { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { StorageError } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { readAll } from "../../src/util/streams.js";

const roots: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("fsStorage on a root it may not write", () => {
  it("reads, stats and lists what is there; a write fails naming the root", async () => {
    const root = mkdtempSync(join(tmpdir(), "rk-fs-ro-"));
    roots.push(root);
    mkdirSync(join(root, "repositories", "team"), { recursive: true });
    writeFileSync(join(root, "repositories", "team", "link"), "hello");
    vi.spyOn(fs.promises, "mkdir").mockRejectedValue(Object.assign(new Error(`EACCES: permission denied, mkdir '${root}/~tmp'`), { code: "EACCES" }));
    const storage = fsStorage({ root });
    expect(await storage.stat("repositories/team/link")).toMatchObject({ size: 5 });
    expect(await storage.stat("repositories/none")).toBeUndefined();
    const body = await storage.read("repositories/team/link");
    expect(new TextDecoder().decode(await readAll(body!))).toBe("hello");
    expect((await storage.list("repositories")).keys).toEqual(["repositories/team/link"]);
    const write = storage.write("repositories/team/other", new TextEncoder().encode("x"));
    await expect(write).rejects.toBeInstanceOf(StorageError);
    await expect(write).rejects.toThrow(/cannot create the root/);
  });
});
