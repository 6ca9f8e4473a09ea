/**
 * The side-by-side harness itself: Distribution 2.8 and `registry-kit serve`
 * started on one and the same config file answer `/v2/` alike.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, tempDir, type Background } from "./helpers/process.js";
import { answers, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";

describe("same config file, both registries", () => {
  const work = tempDir("same-config");
  const running: Background[] = [];
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    work.remove();
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which} starts on a plain filesystem config and answers /v2/ with 200 and the API version header`, async () => {
      const port = await freePort();
      const dir = join(work.path, which);
      mkdirSync(dir, { recursive: true });
      const config = writeConfig(dir, {
        version: 0.1,
        http: { addr: `127.0.0.1:${port}` },
        storage: { filesystem: { rootdirectory: join(dir, "data") } },
      });
      running.push(await startOnConfig(which, config, dir, answers(`http://127.0.0.1:${port}/v2/`)));
      const res = await fetch(`http://127.0.0.1:${port}/v2/`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      expect(res.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
    });
  }
});
