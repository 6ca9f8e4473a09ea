/**
 * `proxy` (Distribution's keys) and `registrykit.proxy.upstreams` in the
 * all-in-one server's config.yml: what they resolve to, and the errors that
 * name the bad key; the start-up banner's line.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { bannerLines } from "../../src/cli/banner.js";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { configError } from "./config-error.js";

const STORAGE = "version: 0.1\nstorage:\n  inmemory: {}\n";

function resolve(yaml: string, env: Record<string, string> = {}) {
  return resolveConfig({ document: parseConfigText(STORAGE + yaml), env, cwd: "/srv" });
}

function fails(yaml: string): string {
  return configError(() => resolve(yaml)).message;
}

describe("proxy configuration", () => {
  it("reads Distribution's proxy section as one upstream for every repository", () => {
    const { config, warnings } = resolve("proxy:\n  remoteurl: https://registry-1.docker.io\n  username: u\n  password: p\n  ttl: 10m\n");
    expect(config.proxy).toEqual([{ prefix: "", url: "https://registry-1.docker.io", credentials: { username: "u", password: "p" }, ttlSeconds: 600, allowPush: false }]);
    expect(warnings.filter((w) => w.startsWith("proxy"))).toEqual([]);
  });

  it("takes REGISTRY_PROXY_* overrides and defaults ttl to 5 minutes", () => {
    const { config } = resolve("", { REGISTRY_PROXY_REMOTEURL: "http://127.0.0.1:5001" });
    expect(config.proxy).toEqual([{ prefix: "", url: "http://127.0.0.1:5001", ttlSeconds: 300, allowPush: false }]);
  });

  it("reads several upstreams by prefix", () => {
    const { config } = resolve(
      "registrykit:\n  proxy:\n    upstreams:\n      - prefix: hub/\n        remoteurl: https://registry-1.docker.io\n        ttl: 1h\n      - prefix: corp/\n        remoteurl: https://corp.example\n        username: bot\n        password: s\n        allowpush: true\n",
    );
    expect(config.proxy).toEqual([
      { prefix: "hub/", url: "https://registry-1.docker.io", ttlSeconds: 3600, allowPush: false },
      { prefix: "corp/", url: "https://corp.example", credentials: { username: "bot", password: "s" }, ttlSeconds: 300, allowPush: true },
    ]);
  });

  it("reads the token realms trusted with an upstream's credentials (issue 41, item 2), in both sections", () => {
    const single = resolve("proxy:\n  remoteurl: https://registry-1.docker.io\n  username: u\n  password: p\n  realms:\n    - https://auth.docker.io/token\n");
    expect(single.config.proxy?.[0]?.realms).toEqual(["https://auth.docker.io/token"]);
    const fromEnv = resolve("", { REGISTRY_PROXY_REMOTEURL: "https://registry-1.docker.io", REGISTRY_PROXY_REALMS: "https://auth.docker.io/token" });
    expect(fromEnv.config.proxy?.[0]?.realms).toEqual(["https://auth.docker.io/token"]);
    const { config } = resolve("registrykit:\n  proxy:\n    upstreams:\n      - prefix: hub/\n        remoteurl: https://registry-1.docker.io\n        realms: [https://auth.docker.io/token]\n");
    expect(config.proxy?.[0]?.realms).toEqual(["https://auth.docker.io/token"]);
    expect(fails("proxy:\n  remoteurl: http://x\n  realms: [auth.docker.io]\n")).toContain("proxy.realms");
    expect(fails("registrykit:\n  proxy:\n    upstreams:\n      - prefix: hub/\n        remoteurl: http://x\n        realms: [ftp://a/]\n")).toContain("upstreams.0.realms");
  });

  it("names the bad key", () => {
    expect(fails("proxy:\n  remoteurl: ftp://x\n")).toContain("proxy.remoteurl");
    expect(fails("proxy:\n  remoteurl: http://x\n  username: u\n")).toContain("proxy.password");
    expect(fails("proxy:\n  remoteurl: http://x\n  exec:\n    command: helper\n")).toContain("proxy.exec");
    expect(fails("registrykit:\n  proxy:\n    upstreams:\n      - prefix: hub/\n")).toContain("registrykit.proxy.upstreams.0.remoteurl");
    expect(fails("registrykit:\n  proxy:\n    upstreams:\n      - prefix: hub/\n        remoteurl: http://x\n        colour: red\n")).toContain("upstreams.0.colour");
    expect(fails("proxy:\n  remoteurl: http://x\nregistrykit:\n  proxy:\n    upstreams:\n      - prefix: ''\n        remoteurl: http://y\n")).toContain("cannot be used together");
  });
});

describe("proxy in the start-up banner", () => {
  it("names each upstream, its ttl and push rule, and never the credentials", async () => {
    const dir = await mkdtemp(`${tmpdir()}/rk-proxy-banner-`);
    const { config } = resolveConfig({
      document: parseConfigText(
        `version: 0.1\nstorage:\n  inmemory: {}\nhttp:\n  secret: banner-test-secret\nregistrykit:\n  keydirectory: ${dir}\n  proxy:\n    upstreams:\n      - prefix: hub/\n        remoteurl: https://registry-1.docker.io\n        username: bot\n        password: Very-Secret-1\n        ttl: 10m\n`,
      ),
      env: {},
      cwd: dir,
    });
    const app = await createAllInOne(config, { origin: "http://127.0.0.1:5000", storage: memoryStorage() });
    try {
      const text = bannerLines("http://127.0.0.1:5000", app.info, "0.0.0").join("\n");
      expect(text).toContain("  pull-through    hub/* from https://registry-1.docker.io (with credentials), tags confirmed after 10m, pushes refused");
      expect(text).not.toContain("Very-Secret-1");
    } finally {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
