/**
 * The banner says what the server will refuse or do by itself (issue 43):
 * read-only mode, the policies in force (immutable tags, quotas, retention,
 * the scheduled GC), or `policies none`; and an upload secret kept only in
 * memory, with Distribution's warning.
 */
import { describe, expect, it } from "vitest";
import { bannerLines, RANDOM_SECRET_WARNING, startupWarnings } from "../../src/cli/banner.js";
import { createAllInOne, type AllInOneInfo } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

/** The banner of `createAllInOne` over memory storage for `yaml` (without a `storage` section: inmemory). */
async function bannerOf(yaml: string): Promise<string[]> {
  const storage = yaml.includes("storage:") ? "" : "storage: {inmemory: {}}\n";
  const { config } = resolveConfig({ document: parseConfigText(`version: 0.1\n${storage}http: {secret: s}\n${yaml}`), env: {}, cwd: "/" });
  const app = await createAllInOne(config, { origin: "http://127.0.0.1:5000", storage: memoryStorage() });
  try {
    return bannerLines("http://127.0.0.1:5000", app.info, "0.0.0-test");
  } finally {
    await app.close();
  }
}

describe("banner: read-only mode and policies", () => {
  it("says none of either for a plain config", async () => {
    const lines = await bannerOf("");
    expect(lines.filter((l) => /READ-ONLY/.test(l))).toEqual([]);
    expect(lines).toContain("  policies        none");
  });

  it("says READ-ONLY with storage.maintenance.readonly.enabled", async () => {
    const lines = await bannerOf("storage: {inmemory: {}, maintenance: {readonly: {enabled: true}}}");
    expect(lines).toContain("  mode            READ-ONLY (storage.maintenance.readonly): every write gets 405, reads work");
  });

  it("lists each policy in force: immutable tags, quotas, retention and the scheduled gc", async () => {
    const lines = await bannerOf([
      "registrykit:",
      "  policy:",
      "    immutabletags: ['v*', 'release-*']",
      "    quotas: {'team-a/*': 10GiB, '*': 512MiB}",
      "  retention:",
      "    - {repositories: '*', keeplast: 5}",
      "    - {repositories: 'ci/*', olderthan: 30d}",
      "  gc: {interval: 24h, removeuntagged: true, dryrun: true}",
    ].join("\n"));
    const from = lines.findIndex((l) => l.startsWith("  policies"));
    expect(lines.slice(from, from + 4)).toEqual([
      "  policies        immutable tags v*, release-*",
      "                  quotas team-a/* 10.0 GiB, * 512.0 MiB",
      "                  retention 2 rules, applied by the scheduled gc",
      "                  gc every 24h, untagged manifests removed, dry run (reports only)",
    ]);
  });

  it("names immutable tags per repository, and retention without a schedule", async () => {
    const lines = await bannerOf("registrykit:\n  policy: {immutabletags: {'prod/*': ['*']}}\n  retention: [{repositories: '*', keeplast: 1}]");
    expect(lines).toContain("  policies        immutable tags prod/*: *");
    expect(lines).toContain("                  retention 1 rule, applied by `registry-kit gc`");
  });
});

describe("banner: an upload secret only in memory (issue 43)", () => {
  const info = (uploadSecret: AllInOneInfo["uploadSecret"]): AllInOneInfo => ({
    registryPath: "/v2/", storage: "filesystem /var/lib/docker-registry", keyDirectory: "/data/keys", auth: { mode: "none" }, uploadSecret,
  });

  it("says so on the keys and secret lines, and warns with Distribution's words and the reason", () => {
    const memory = info({ source: "memory", created: true, reason: "EACCES: permission denied, mkdir '/data'" });
    const lines = bannerLines("http://127.0.0.1:5000", memory, "0.0.0-test");
    expect(lines).toContain("  keys            /data/keys (not writable: nothing kept)");
    expect(lines).toContain("  upload secret   random, in memory (lost at exit; see the warning above)");
    const { config } = resolveConfig({ document: parseConfigText("version: 0.1\nstorage: {inmemory: {}}\nhttp: {addr: '127.0.0.1:5000'}"), env: {}, cwd: "/" });
    expect(startupWarnings({ ...config, keyDirectory: "/data/keys" }, memory)).toEqual([
      `${RANDOM_SECRET_WARNING} (Not kept in /data/keys: EACCES: permission denied, mkdir '/data'; set registrykit.keydirectory to a writable directory to keep one across restarts.)`,
    ]);
  });

  it("a secret from a file or http.secret gives no warning", () => {
    const { config } = resolveConfig({ document: parseConfigText("version: 0.1\nstorage: {inmemory: {}}"), env: {}, cwd: "/" });
    expect(startupWarnings(config, info({ source: "config", created: false }))).toEqual([]);
    expect(startupWarnings(config, info({ source: "file", file: "/k/upload-secret", created: true }))).toEqual([]);
  });
});
