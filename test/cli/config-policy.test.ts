/**
 * `registrykit.policy`, `registrykit.retention` and `registrykit.gc` in the
 * all-in-one server's config.yml: what they resolve to, the errors naming the
 * bad key, and the registry they build (a refused push, the quota route).
 */
import { describe, expect, it } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { pushImage } from "../registry/helpers.js";

const STORAGE = "version: 0.1\nstorage:\n  inmemory: {}\n";

function resolve(yaml: string, env: Record<string, string> = {}) {
  return resolveConfig({ document: parseConfigText(STORAGE + yaml), env, cwd: "/srv" });
}

/** The ConfigError `yaml` stops start-up with (its message). */
function refusal(yaml: string): string {
  let caught: unknown;
  expect(() => {
    try {
      resolve(yaml);
    } catch (error) {
      caught = error;
      throw error;
    }
  }).toThrow(ConfigError);
  return (caught as ConfigError).message;
}

describe("policy, retention and gc configuration", () => {
  it("reads every key with its defaults, without warnings", () => {
    const { config, warnings } = resolve(`registrykit:
  policy:
    immutabletags: ["v*", "release-*"]
    quotas: { "team-a/*": 10GiB, "*": 500MB }
  retention:
    - { repositories: ["team-a/*"], keeplast: 10, olderthan: 30d, tags: ["release-*"] }
    - { repositories: "*", olderthan: 720h }
  gc: { interval: 24h }
`);
    expect(warnings).toEqual(["auth: no authentication configured; anyone who can reach the server can push and pull"]);
    expect(config.policy).toEqual({ immutableTags: ["v*", "release-*"], quotas: { "team-a/*": 10 * 2 ** 30, "*": 500e6 } });
    expect(config.retention).toEqual([
      { repositories: ["team-a/*"], tags: ["release-*"], keepLast: 10, olderThanSeconds: 30 * 86400 },
      { repositories: ["*"], olderThanSeconds: 720 * 3600 },
    ]);
    expect(config.gc).toEqual({ intervalMs: 24 * 3600 * 1000, removeUntagged: false, gracePeriodSeconds: 3600, dryRun: false });
  });

  it("takes immutabletags per repository glob, and REGISTRY_REGISTRYKIT_GC_INTERVAL", () => {
    const { config } = resolve(`registrykit:\n  policy:\n    immutabletags: { "prod/*": ["*"], "*": "v*" }\n  gc: { interval: 1h, removeuntagged: true, dryrun: true, graceperiod: 10m }\n`, { REGISTRY_REGISTRYKIT_GC_INTERVAL: "2h" });
    expect(config.policy).toEqual({ immutableTags: { "prod/*": ["*"], "*": ["v*"] } });
    expect(config.gc).toEqual({ intervalMs: 2 * 3600 * 1000, removeUntagged: true, gracePeriodSeconds: 600, dryRun: true });
    expect(resolve("").config.policy).toBeUndefined();
    expect(resolve("").config.gc).toBeUndefined();
  });

  it("refuses what would silently keep less, or is malformed, naming the key", () => {
    expect(refusal("registrykit:\n  retention:\n    - { repositories: a, keeplst: 3 }\n")).toBe("registrykit.retention[0].keeplst: unknown key; a rule has repositories, tags, keeplast, olderthan");
    expect(refusal("registrykit:\n  retention:\n    - { repositories: a }\n")).toBe("registrykit.retention[0]: give at least one of keeplast, olderthan, tags (a rule with none would remove every tag)");
    expect(refusal("registrykit:\n  retention:\n    - { keeplast: 3 }\n")).toBe("registrykit.retention[0].repositories: required: the repository globs the rule applies to");
    expect(refusal("registrykit:\n  retention: { repositories: a }\n")).toBe("registrykit.retention: expected a list of rules (repositories, tags, keeplast, olderthan)");
    expect(refusal("registrykit:\n  retention:\n    - { repositories: a, keeplast: -1 }\n")).toBe('registrykit.retention[0].keeplast: expected a whole number, got -1');
    expect(refusal("registrykit:\n  retention:\n    - { repositories: a, olderthan: soon }\n")).toMatch(/^registrykit.retention\[0\].olderthan: expected a duration/);
    expect(refusal("registrykit:\n  policy:\n    quotas: { a: lots }\n")).toBe('registrykit.policy.quotas.a: expected a size such as "64GiB" or "500MB", got "lots"');
    expect(refusal("registrykit:\n  policy:\n    quotas: [a]\n")).toMatch(/^registrykit.policy.quotas: expected a map of repository glob to size/);
    expect(refusal("registrykit:\n  gc: { removeuntagged: true }\n")).toBe('registrykit.gc.interval: required: how often to collect, e.g. "24h"');
    expect(refusal("registrykit:\n  gc: { interval: 10ms }\n")).toBe("registrykit.gc.interval: must be at least 1s");
    expect(resolve("registrykit:\n  gc: { enabled: false }\n").config.gc).toBeUndefined();
  });

  it("builds a registry that enforces the configured policies", async () => {
    const { config } = resolve("registrykit:\n  policy:\n    immutabletags: [v1]\n");
    const app = await createAllInOne({ ...config, keyDirectory: "/nonexistent", http: { ...config.http, secret: "s" } }, { storage: memoryStorage() });
    const registry = (request: Request) => app.handler(request);
    await pushImage(registry, "app", "v1", "a");
    await expect(pushImage(registry, "app", "v1", "b")).rejects.toThrow(/manifest PUT 403 .*tag v1 of app is immutable/);
    await app.close();
  });
});
