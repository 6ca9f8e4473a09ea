/**
 * Inputs the fuzzers found, kept as plain tests (each failed before its fix).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { pushImage, req } from "../registry/helpers.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const drivers: [string, () => Promise<StorageDriver>][] = [
  ["memory", async () => memoryStorage()],
  [
    "fs",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "rk-regress-"));
      dirs.push(dir);
      return fsStorage({ root: dir, fsync: false });
    },
  ],
];

describe.each(drivers)("repository names of 128 to 255 characters (%s)", (_, make) => {
  // Found by test/fuzz/registry.test.ts: GET /v2/a/<253 × b>/tags/list answered 500
  // (the catalog marker key, hex of the name, was one 510-character segment).
  it("push, tags/list and _catalog work, in name order, for long names sharing prefixes", async () => {
    const registry = createRegistry({ storage: await make(), uploadSecret: "s" });
    const names = [
      "a/" + "b".repeat(125), // hex exactly 254
      "a/" + "b".repeat(126), // hex 256: split, and its first chunk is the name above
      "a/" + "b".repeat(253), // 255 characters, the longest
      "a/" + "b".repeat(200) + "c",
      "a/bc",
      "z",
    ];
    for (const name of names) {
      expect(name.length).toBeLessThanOrEqual(255);
      await pushImage(registry, name, "v1", name);
      const tags = await registry(req("GET", `/v2/${name}/tags/list`));
      expect(tags.status).toBe(200);
      expect(await tags.json()).toEqual({ name, tags: ["v1"] });
    }
    const catalog = await registry(req("GET", "/v2/_catalog"));
    expect(catalog.status).toBe(200);
    const sorted = [...names].sort();
    expect(((await catalog.json()) as { repositories: string[] }).repositories).toEqual(sorted);
    // paging with `last` on a long name
    const next = await registry(req("GET", `/v2/_catalog?n=2&last=${sorted[1]}`));
    expect(((await next.json()) as { repositories: string[] }).repositories).toEqual(sorted.slice(2, 4));
    const unknown = await registry(req("GET", `/v2/a/${"q".repeat(253)}/tags/list`));
    expect(unknown.status).toBe(404);
  });
});
