/**
 * The banner's listenAddress() on the address of a real server bound to
 * 127.0.0.1 (banner.test.ts covers the rest without a socket). In the system
 * project: it listens on a port.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bannerLines, listenAddress, READY } from "../../src/cli/banner.js";
import { serve } from "../../src/node/index.js";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

let dir: string;
let app: AllInOne;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-banner-"));
  const config = resolveConfig({ document: undefined, env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }, cwd: dir }).config;
  app = await createAllInOne(config, { origin: "http://127.0.0.1:5000", storage: memoryStorage() });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("banner: the address actually bound", () => {
  it("a real server bound to 127.0.0.1: listenAddress reads the bound port", async () => {
    const server = await serve(() => Promise.resolve(new Response("ok")), { host: "127.0.0.1", port: 0 });
    try {
      const listen = listenAddress(server.server.address() as AddressInfo);
      expect(listen).toEqual({ address: "127.0.0.1", port: server.port });
      expect(bannerLines(server.url, app.info, "0.0.0", listen)[0]).toBe(`${READY} ${server.url} (registry-kit 0.0.0)`);
    } finally {
      await server.close(0);
    }
  });
});
