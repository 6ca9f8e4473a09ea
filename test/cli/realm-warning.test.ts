/**
 * Listening on every interface (0.0.0.0 / ::) with a token realm derived
 * from the listen address means the realm names loopback: clients on other
 * hosts would ask their own 127.0.0.1 for tokens. The CLI warns at start-up
 * (`registry-kit: warning: …` on stderr) unless `auth.token.realm` or
 * `http.host` says where clients should go. Tested on `startupWarnings()`
 * (what `main()` prints), since a test must not bind 0.0.0.0.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { startupWarnings } from "../../src/cli/banner.js";
import { parseConfigText, resolveConfig, type AllInOneConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-realm-warning-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function config(yaml: string | undefined, env: Record<string, string> = {}): AllInOneConfig {
  return resolveConfig({ document: yaml === undefined ? undefined : parseConfigText(yaml), env: { REGISTRY_KIT_DATA: dir, ...env }, cwd: dir }).config;
}

async function warningsFor(c: AllInOneConfig, origin: string): Promise<string[]> {
  const app = await createAllInOne(c, { origin, storage: memoryStorage() });
  try {
    return startupWarnings(c, app.info);
  } finally {
    await app.close();
  }
}

describe("start-up warning: a realm on loopback while listening on every interface", () => {
  it("HOST=0.0.0.0 without a realm: warns, naming the realm and how to fix it", async () => {
    const c = config(undefined, { HOST: "0.0.0.0" });
    expect(c.http.host).toBe("0.0.0.0");
    const warnings = await warningsFor(c, "http://127.0.0.1:5000");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("listening on 0.0.0.0:5000 (every interface) but the token realm is http://127.0.0.1:5000/service/token");
    expect(warnings[0]).toContain("clients on other hosts cannot reach");
    expect(warnings[0]).toContain("auth.token.realm");
    expect(warnings[0]).toContain("http.host");
  });

  it("http.addr ':5000' (Distribution's usual form) and [::] warn too", async () => {
    const yaml = (addr: string) => `version: 0.1\nhttp: {addr: "${addr}"}\nstorage: {inmemory: {}}\nregistrykit: {keydirectory: ${dir}/keys, tokenservice: {}}\n`;
    expect((await warningsFor(config(yaml(":5000")), "http://127.0.0.1:5000"))[0]).toContain("realm is http://127.0.0.1:5000/service/token");
    expect((await warningsFor(config(yaml("[::]:5000")), "http://[::1]:5000"))[0]).toContain("listening on [::]:5000 (every interface)");
  });

  it("no warning with an explicit realm, with http.host, on loopback, or without auth", async () => {
    const base = `version: 0.1\nstorage: {inmemory: {}}\nregistrykit: {keydirectory: ${dir}/keys, tokenservice: {}}\n`;
    expect(await warningsFor(config(`${base}http: {addr: ":5000"}\nauth: {token: {realm: "https://reg.example/service/token"}}\n`), "http://127.0.0.1:5000")).toEqual([]);
    expect(await warningsFor(config(`${base}http: {addr: ":5000", host: "https://reg.example"}\n`), "http://127.0.0.1:5000")).toEqual([]);
    expect(await warningsFor(config(undefined), "http://127.0.0.1:5000")).toEqual([]);
    const open = config(`version: 0.1\nhttp: {addr: ":5000"}\nstorage: {inmemory: {}}\nregistrykit: {keydirectory: ${dir}/keys}\n`);
    expect(await warningsFor(open, "http://127.0.0.1:5000")).toEqual([]);
  });
});
