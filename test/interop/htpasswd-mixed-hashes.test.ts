/**
 * Side by side on one config file (issue 41, item 13): Debian's
 * `docker-registry` (Distribution 2.8) and `registry-kit serve` with an
 * htpasswd file holding one bcrypt user (`htpasswd -B`) and one SHA-1 user
 * (`htpasswd -s`). Both let the bcrypt user in and refuse the other with 401;
 * registry-kit warns once about the ignored line (before: every credential got
 * 400, the file counted as unusable).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, requireTool, tempDir } from "./helpers/process.js";
import { challenges, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });

describe("an htpasswd file with a non-bcrypt line, both registries", () => {
  const work = tempDir("htpasswd-mixed");
  const outcomes: Partial<Record<SameConfigServer, Record<string, number>>> = {};
  afterAll(() => work.remove());

  const htpasswd = join(work.path, "htpasswd");
  const tool = requireTool("htpasswd");
  writeFileSync(htpasswd, [
    execFileSync(tool, ["-Bbn", "alice", "alice-password"]).toString().trim(),
    execFileSync(tool, ["-sbn", "bob", "bob-password"]).toString().trim(),
    execFileSync(tool, ["-Bbn", "carol", "carol-password"]).toString().trim(),
    "",
  ].join("\n"));

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: lets the bcrypt users in and refuses the SHA-1 one`, async () => {
      const dir = join(work.path, which);
      mkdirSync(dir, { recursive: true });
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/v2/`;
      const config = writeConfig(dir, {
        version: 0.1,
        http: { addr: `127.0.0.1:${port}`, secret: "same-secret" },
        storage: { filesystem: { rootdirectory: join(dir, "data") } },
        auth: { htpasswd: { realm: "basic-realm", path: htpasswd } },
      });
      const server = await startOnConfig(which, config, dir, challenges(url));
      try {
        const status = async (headers: Record<string, string>) => {
          const res = await fetch(url, { headers });
          await res.arrayBuffer();
          return res.status;
        };
        outcomes[which] = {
          alice: await status(basic("alice", "alice-password")),
          carol: await status(basic("carol", "carol-password")),
          bob: await status(basic("bob", "bob-password")),
          aliceWrong: await status(basic("alice", "bob-password")),
          anonymous: await status({}),
        };
        expect(outcomes[which]).toEqual({ alice: 200, carol: 200, bob: 401, aliceWrong: 401, anonymous: 401 });
        if (which === "registry-kit") {
          const warnings = server.output().match(/htpasswd line ignored/g) ?? [];
          expect(warnings, server.output()).toHaveLength(1);
          expect(server.output()).not.toMatch(/\{SHA\}/);
        }
      } finally {
        await server.stop();
      }
    });
  }

  it("both gave the same answers", () => {
    expect(outcomes["registry-kit"]).toBeDefined();
    expect(outcomes["registry-kit"]).toEqual(outcomes.distribution);
  });
});
