/**
 * An unprivileged start from `/` on Debian's unmodified
 * `/etc/docker/registry/config.yml` (issue 43, part 5). Both Debian's
 * `docker-registry` (Distribution 2.8) and `registry-kit serve` run as
 * `nobody` (through `setpriv`; the tests run as root) with only
 * `REGISTRY_HTTP_ADDR` set: both start, warn that they generated a random
 * upload secret (Distribution's words), and challenge `/v2/`; registry-kit
 * creates no `/data`. When something must persist (our token service's
 * signing key, or a key directory the operator chose), registry-kit refuses to
 * start and the error names the settings that avoid it. On a storage root it
 * may read but not write, both serve reads and refuse a push alike.
 */
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeRun, freePort, requireTool, run, tempDir, waitFor } from "./helpers/process.js";
import { started, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";

const DEBIAN_CONFIG = "/etc/docker/registry/config.yml";
const NOBODY = { uid: 65534, gid: 65534 };
const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const RANDOM_SECRET = "No HTTP secret provided - generated random secret. This may cause problems with uploads if multiple registries are behind a load-balancer. To provide a shared secret, fill in http.secret in the configuration file or set the REGISTRY_HTTP_SECRET environment variable.";

interface Outcome {
  status: number;
  warned: boolean;
}

describe("as nobody from / with Debian's config, both registries", () => {
  const outcomes: Partial<Record<SameConfigServer, Outcome>> = {};
  beforeAll(() => {
    requireTool("docker-registry");
    requireTool("setpriv");
    // The test needs a / that nobody cannot write, and no /data left from elsewhere.
    expect(existsSync("/data")).toBe(false);
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: starts with a random upload secret and Distribution's warning`, async () => {
      const port = await freePort();
      const server = await startOnConfig(which, DEBIAN_CONFIG, "/", started(`http://127.0.0.1:${port}/v2/`), 60_000, {
        env: { REGISTRY_HTTP_ADDR: `127.0.0.1:${port}` },
        user: NOBODY,
      });
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v2/`);
        await res.arrayBuffer();
        outcomes[which] = { status: res.status, warned: server.output().includes(RANDOM_SECRET) };
        expect(outcomes[which], server.output()).toEqual({ status: 401, warned: true });
        expect(existsSync("/data")).toBe(false);
      } finally {
        await server.stop();
      }
    });
  }

  it("both answered alike", () => {
    expect(outcomes["registry-kit"]).toBeDefined();
    expect(outcomes["registry-kit"]).toEqual(outcomes.distribution);
  });
});

describe("as nobody on a storage root it may read but not write, both registries", () => {
  const work = tempDir("unprivileged-root");
  const answers: Partial<Record<SameConfigServer, { catalog: string; tags: number; push: number }>> = {};
  beforeAll(() => chmodSync(work.path, 0o755));
  afterAll(() => work.remove());

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: serves reads (catalog, tags) and refuses a push`, async () => {
      const root = join(work.path, `root-${which}`);
      mkdirSync(root, { mode: 0o755 }); // root's: nobody reads it, writes nothing
      const port = await freePort();
      const config = writeConfig(work.path, { version: 0.1, storage: { filesystem: { rootdirectory: root } }, http: { addr: `127.0.0.1:${port}`, secret: "s" } }, `${which}.yml`);
      chmodSync(config, 0o644);
      const server = await startOnConfig(which, config, "/", started(`http://127.0.0.1:${port}/v2/`), 60_000, { user: NOBODY });
      try {
        const catalog = await fetch(`http://127.0.0.1:${port}/v2/_catalog`);
        const tags = await fetch(`http://127.0.0.1:${port}/v2/team/app/tags/list`);
        await tags.arrayBuffer();
        const push = await fetch(`http://127.0.0.1:${port}/v2/team/app/blobs/uploads/`, { method: "POST" });
        await push.arrayBuffer();
        answers[which] = { catalog: `${catalog.status} ${await catalog.text()}`.trim(), tags: tags.status, push: push.status };
        expect(answers[which], server.output()).toEqual({ catalog: '200 {"repositories":[]}', tags: 404, push: 500 });
      } finally {
        await server.stop();
      }
    });
  }

  it("both answered alike", () => {
    expect(answers["registry-kit"]).toBeDefined();
    expect(answers["registry-kit"]).toEqual(answers.distribution);
  });
});

describe("as nobody, registry-kit refuses to start when something must persist, naming the settings that avoid it", () => {
  const work = tempDir("unprivileged");
  beforeAll(() => chmodSync(work.path, 0o755));
  afterAll(() => work.remove());

  /** `registry-kit serve <document>` as nobody from `/`; it must exit by itself (the work directory is root's, mode 0755). */
  async function serveAsNobody(document: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
    const config = writeConfig(work.path, document, `config-${Math.random().toString(36).slice(2)}.yml`);
    chmodSync(config, 0o644);
    const args = [`--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, "--clear-groups", "--", process.execPath, BIN, "serve", config];
    return run(requireTool("setpriv"), args, { cwd: "/", env: { NODE_ENV: "production", ...env }, timeoutMs: 30_000 });
  }

  it("the token service's signing key: set registrykit.tokenservice.key/.certificate or registrykit.keydirectory", async () => {
    const port = await freePort();
    const result = await serveAsNobody({ version: 0.1, http: { addr: `127.0.0.1:${port}` }, storage: { inmemory: {} }, registrykit: { tokenservice: {} } });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain("registry-kit: start-up failed: cannot keep the token signing key in /data/keys: EACCES: permission denied, mkdir '/data'; " +
      "set registrykit.tokenservice.key and registrykit.tokenservice.certificate to existing files, or registrykit.keydirectory (REGISTRY_KIT_DATA) to a writable directory");
  });

  it("a key directory the operator chose (REGISTRY_KIT_DATA): set http.secret or a writable directory", async () => {
    const port = await freePort();
    const result = await serveAsNobody({ version: 0.1, http: { addr: `127.0.0.1:${port}` }, storage: { inmemory: {} } }, { REGISTRY_KIT_DATA: join(work.path, "rk-denied") });
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toMatch(/start-up failed: cannot keep the upload secret in \S+rk-denied\/keys: EACCES: permission denied, mkdir '\S+'; set http\.secret \(REGISTRY_HTTP_SECRET\) to a secret shared by every process, or registrykit\.keydirectory \(REGISTRY_KIT_DATA\) to a writable directory/);
  });

  it("with http.secret set it needs no key directory at all", async () => {
    const port = await freePort();
    const server = await startOnConfig("registry-kit", writeConfig(work.path, { version: 0.1, http: { addr: `127.0.0.1:${port}`, secret: "s3cret" }, storage: { inmemory: {} }, registrykit: { keydirectory: "/denied/keys" } }, "with-secret.yml"), "/", started(`http://127.0.0.1:${port}/v2/`), 60_000, { user: NOBODY });
    try {
      // The banner follows the first answers by a moment.
      await waitFor("the banner", async () => server.output().includes("  ready;"));
      expect(server.output()).not.toContain("No HTTP secret provided");
      expect(server.output()).toContain("upload secret   from http.secret");
    } finally {
      await server.stop();
    }
  });
});
